#!/usr/bin/env python3
"""Lays out the Noto emoji of the npm package emoji-datasource-google as a folder of
class folders, a real colour image set for gantry's docs and tests (docs/images.md).

    python3 scripts/emoji_images.py DEST                 downloads the package and writes DEST
    python3 scripts/emoji_images.py DEST --tarball TGZ   from a tarball already fetched
                                                         (`npm pack emoji-datasource-google@16.0.0`)

The package (version 16.0.0, from the npm registry) holds 3,786 PNGs of 64x64 RGBA: 1,911
emoji and 1,875 skin-tone variations. Its emoji.json gives each emoji a category; DEST
gets one folder per category (Smileys & Emotion -> smileys-emotion, ...; a variation goes
with its emoji), so `gantry-worker make-dataset --labels folders` (the default) labels
them. The images are Google's Noto Color Emoji (Apache License 2.0); the package's own
files are MIT-licensed (its LICENSE, copied to DEST).

The tarball's SHA-512 is checked before anything is written. DEST is written under a
temporary name beside it and renamed into place when complete; an existing DEST made by
this script for the same version is left as it is ("already there"), anything else at
DEST is refused (nothing of the user's is written over). Exit 0 done, 1 failure, 2 usage.
"""
import argparse
import hashlib
import io
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
import urllib.request

PACKAGE = "emoji-datasource-google"
VERSION = "16.0.0"
URL = f"https://registry.npmjs.org/{PACKAGE}/-/{PACKAGE}-{VERSION}.tgz"
SHA512 = ("6517b17f3b3b315a0b9e6cd998db0ee132a19c0269e43fbe566e8fa54a47fe31104257a6a7797cf028d9f83a19d9f68c"
          "f51e10c5990e3c90a84fc0e53e17d0dc")
MARKER = ".emoji-images"  # in DEST: which package version made it
IMAGES = "package/img/google/64/"


def fail(message, code=1):
    print(f"emoji_images: {message}", file=sys.stderr)
    sys.exit(code)


def fetch(tarball):
    if tarball:
        with open(tarball, "rb") as f:
            return f.read()
    print(f"emoji_images: downloading {URL}")
    try:
        with urllib.request.urlopen(URL, timeout=120) as response:
            return response.read()
    except OSError as e:
        fail(f"cannot download {URL}: {e} (fetch it with `npm pack {PACKAGE}@{VERSION}` and pass --tarball)")


def folder_name(category):
    """'Smileys & Emotion' -> 'smileys-emotion'."""
    return re.sub(r"[^a-z0-9]+", "-", category.lower()).strip("-")


def image_classes(emoji):
    """{image file name: class folder} for every Google image in emoji.json."""
    classes = {}
    for e in emoji:
        folder = folder_name(e["category"])
        if e.get("has_img_google"):
            classes[e["image"]] = folder
        for variation in (e.get("skin_variations") or {}).values():
            if variation.get("has_img_google"):
                classes[variation["image"]] = folder
    return classes


def lay_out(data, dest):
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        emoji = json.load(tar.extractfile("package/emoji.json"))
        classes = image_classes(emoji)
        parent = os.path.dirname(os.path.abspath(dest))
        os.makedirs(parent, exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".emoji-images-", dir=parent)
        try:
            written = 0
            for member in tar.getmembers():
                name = member.name[len(IMAGES):] if member.name.startswith(IMAGES) else None
                if not name or not member.isfile() or name not in classes:
                    continue
                folder = os.path.join(staging, classes[name])
                os.makedirs(folder, exist_ok=True)
                with open(os.path.join(folder, name), "wb") as out:
                    out.write(tar.extractfile(member).read())
                written += 1
            if written != len(classes):
                fail(f"the package names {len(classes)} images but holds {written} of them")
            with open(os.path.join(staging, "LICENSE"), "wb") as out:
                out.write(tar.extractfile("package/LICENSE").read())
            with open(os.path.join(staging, MARKER), "w") as out:
                out.write(f"{PACKAGE} {VERSION}\n")
            os.rename(staging, dest)  # fails if something appeared at dest meanwhile
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
    counts = {}
    for folder in classes.values():
        counts[folder] = counts.get(folder, 0) + 1
    print(f"emoji_images: {written} images in {len(counts)} class folders in {dest}: " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", help="the folder to create")
    parser.add_argument("--tarball", help="the package's .tgz, already downloaded")
    args = parser.parse_args()
    marker = os.path.join(args.dest, MARKER)
    if os.path.exists(args.dest):
        if os.path.isfile(marker) and open(marker).read().strip() == f"{PACKAGE} {VERSION}":
            print(f"emoji_images: {args.dest} already there ({PACKAGE} {VERSION})")
            return 0
        fail(f"{args.dest} exists and was not made by this script for {PACKAGE} {VERSION}; choose another folder", 2)
    data = fetch(args.tarball)
    digest = hashlib.sha512(data).hexdigest()
    if digest != SHA512:
        fail(f"the tarball's SHA-512 is {digest}, not the expected {SHA512}: not {PACKAGE} {VERSION}")
    lay_out(data, args.dest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
