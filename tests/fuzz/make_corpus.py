#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz targets into tests/fuzz/corpus/<target>/.

Seeds are small, well-formed inputs of each format (plus a few near misses), so the
fuzzers start from files that reach deep into each reader instead of having to discover
the magic numbers first. Each target's mode byte (see the *_fuzz.cc files) comes first.
Inputs a fuzzer crashed on are added to the same folders by hand, named crash-<what>;
this script leaves files it did not write alone. Standard library only.

    python3 tests/fuzz/make_corpus.py
"""
import gzip
import json
import os
import struct
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    folder = os.path.join(ROOT, target)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# IDX: mode byte 0 = the file as is, 1 = gzip the rest first.
def idx_images(count, rows, cols):
    pixels = bytes((i * 37) & 0xFF for i in range(count * rows * cols))
    return struct.pack(">IIII", 2051, count, rows, cols) + pixels


def idx_labels(count):
    return struct.pack(">II", 2049, count) + bytes(i % 10 for i in range(count))


def idx_seeds():
    images = idx_images(3, 4, 4)
    put("idx_reader", "images-raw", b"\0" + images)
    put("idx_reader", "images-gzip-by-target", b"\1" + images)
    put("idx_reader", "images-gzip-file", b"\0" + gzip.compress(images, mtime=0))
    put("idx_reader", "images-gzip-two-members", b"\0" + gzip.compress(images[:10], mtime=0) +
        gzip.compress(images[10:], mtime=0))
    put("idx_reader", "labels-raw", b"\0" + idx_labels(12))
    put("idx_reader", "labels-gzip-by-target", b"\1" + idx_labels(12))
    put("idx_reader", "images-truncated", b"\0" + images[:-5])
    put("idx_reader", "images-trailing", b"\0" + images + b"xyz")
    put("idx_reader", "images-zero-count", b"\0" + idx_images(0, 28, 28))
    put("idx_reader", "images-28x28", b"\1" + idx_images(2, 28, 28))


# .npy: the file itself.
def npy(descr, shape, payload, version=(1, 0), fortran=False):
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, "True" if fortran else "False",
                                                                       shape_text)
    length_bytes = 2 if version[0] == 1 else 4
    prefix = 6 + 2 + length_bytes
    pad = (64 - (prefix + len(header) + 1) % 64) % 64
    header = header + " " * pad + "\n"
    length = struct.pack("<H" if length_bytes == 2 else "<I", len(header))
    return b"\x93NUMPY" + bytes(version) + length + header.encode("latin1") + payload


def npy_seeds():
    f4 = struct.pack("<6f", 0.5, -1.0, 2.25, 3e38, -0.0, 1e-40)
    put("npy", "f4-2x3", npy("<f4", (2, 3), f4))
    put("npy", "f8-3", npy("<f8", (3,), struct.pack("<3d", 1.5, -2.0, 1e-300)))
    put("npy", "f4-scalar", npy("<f4", (), struct.pack("<f", 7.0)))
    put("npy", "f4-empty", npy("<f4", (0, 5), b""))
    put("npy", "f4-v2", npy("<f4", (1, 1, 2), struct.pack("<2f", 1, 2), version=(2, 0)))
    put("npy", "f4-v3", npy("<f4", (2,), struct.pack("<2f", 1, 2), version=(3, 0)))
    put("npy", "fortran", npy("<f4", (2, 1), struct.pack("<2f", 1, 2), fortran=True))
    put("npy", "dtype-int", npy("<i4", (2,), struct.pack("<2i", 1, 2)))
    put("npy", "truncated", npy("<f4", (4,), struct.pack("<3f", 1, 2, 3)))
    put("npy", "not-npy", b"PK\x03\x04 a zip file")


# Checkpoints: mode byte 0 = the whole file, 1 = the payload (the target adds the header).
def section(tag, body):
    return struct.pack("<IIQ", tag, 0, len(body)) + body


def u64(v):
    return struct.pack("<Q", v)


def i64(v):
    return struct.pack("<q", v)


def string(s):
    return u64(len(s)) + s.encode()


def floats(values):
    return u64(len(values)) + struct.pack("<%df" % len(values), *values)


def doubles(values):
    return u64(len(values)) + struct.pack("<%dd" % len(values), *values)


def i64s(values):
    return u64(len(values)) + b"".join(i64(v) for v in values)


def layout(entries):
    return u64(len(entries)) + b"".join(string(name) + i64s(dims) for name, dims in entries)


def checkpoint_payload(model=True):
    position = b"".join(i64(v) for v in (0, 8, 1, 2, 2, 2, 100)) + u64(42) + i64(64) + i64(2) + u64(7) + i64(0)
    network = (layout([("dense.w", [2, 3]), ("dense.b", [2])]) + layout([("bn.mean", [2])]) +
               floats([0.1 * i for i in range(8)]) + floats([0.0, 1.0]))
    adam = string("adam") + i64(2) + u64(2) + floats([0.0] * 8) + floats([1.0] * 8)
    sgd = string("sgd") + i64(2) + u64(1) + floats([0.5] * 8)
    scalers = (struct.pack("<f", 65536.0) + i64(2) + i64(0)) * 2
    epoch = doubles([0.01, 0.02]) + struct.pack("<4d", 0.001, 0.002, 1.4, 0.7) + i64(0) + i64(1) + \
        struct.pack("<d", 0.05) + i64(0)
    row = b"".join(i64(v) for v in (8, 1, 4)) + struct.pack("<8d", *(0.5,) * 8) + i64(2) + \
        struct.pack("<2d", 0.1, 0.2) + i64(0) + struct.pack("<2d", 65536.0, 65536.0) + i64(0) + i64(1) + \
        struct.pack("<d", 120.0)
    sections = [section(1, position), section(2, network), section(3, network), section(4, adam),
                section(5, sgd), section(6, scalers), section(7, i64s([4, 4])), section(8, epoch),
                section(9, u64(1) + row), section(10, string("rank,step\n"))]
    if model:
        sections.append(section(11, string("dcgan")))
    return b"".join(sections)


def checkpoint_file(payload, version=1):
    head = b"GANTRYCK" + struct.pack("<IIQI", version, 32, len(payload), zlib.crc32(payload))
    return head + struct.pack("<I", zlib.crc32(head)) + payload


def checkpoint_seeds():
    payload = checkpoint_payload()
    put("checkpoint", "payload", b"\1" + payload)
    put("checkpoint", "payload-no-model", b"\1" + checkpoint_payload(model=False))
    put("checkpoint", "payload-unknown-section", b"\1" + payload + section(99, b"future"))
    put("checkpoint", "file", b"\0" + checkpoint_file(payload))
    put("checkpoint", "file-version-2", b"\0" + checkpoint_file(payload, version=2))
    put("checkpoint", "file-torn", b"\0" + checkpoint_file(payload)[:-9])
    put("checkpoint", "file-bad-crc", b"\0" + checkpoint_file(payload)[:40] + b"\xff" + checkpoint_file(payload)[41:])


# Run files: the text.
def run_file_seeds():
    put("run_file", "yaml", "model: dcgan\ndataset: mnist\nepochs: 2\nbatch-size: [64, 128]\nlr: 0.0002\n"
        "beta1: 0.5\noptimizer: adam\nprecision: bf16\nloss-scale: dynamic\nsync-bn: true\n")
    put("run_file", "yaml-snake", "data_dir: /tmp/mnist\nbatch_size: 64,128,256\nmax_steps: 10\nseed: 7\n")
    put("run_file", "json", json.dumps({"model": "dcgan", "epochs": 1, "batch-size": [64], "lr": 1e-4,
                                        "rebalance": False, "straggler-factor": 1.5}))
    put("run_file", "yaml-anchors", "base: &b 64\nbatch-size: *b\n")
    put("run_file", "yaml-nested", "model:\n  name: dcgan\n")
    put("run_file", "yaml-duplicate", "epochs: 1\nepochs: 2\n")
    put("run_file", "yaml-flow", "{epochs: 3, loss-scale: '1024', loss-scale-init: 65536}\n")
    put("run_file", "yaml-multidoc", "epochs: 1\n---\nepochs: 2\n")
    put("run_file", "not-a-mapping", "- 64\n- 128\n")


# RunSpecs: mode byte 0 = a serialized RunSpec, 1 = "setting=value" lines.
def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field(number, wire, payload):
    return varint(number << 3 | wire) + payload


def length_delimited(number, payload):
    return field(number, 2, varint(len(payload)) + payload)


def wrapper_int(number, v):
    return length_delimited(number, field(1, 0, varint(v & (2**64 - 1))))


def wrapper_double(number, v):
    return length_delimited(number, field(1, 1, struct.pack("<d", v)))


def run_spec_seeds():
    spec = (length_delimited(1, b"dcgan") + length_delimited(2, b"mnist") + wrapper_int(4, 2) +
            length_delimited(5, varint(64) + varint(128)) + wrapper_double(7, 2e-4) + wrapper_double(8, 0.5) +
            wrapper_int(14, 42) + length_delimited(17, field(1, 0, varint(1))) + length_delimited(22, b"bf16") +
            wrapper_double(29, 65536.0) + wrapper_int(26, -1))
    put("run_spec", "proto", b"\0" + spec)
    put("run_spec", "proto-empty", b"\0")
    put("run_spec", "proto-unpacked-batch", b"\0" + field(5, 0, varint(64)) + field(5, 0, varint(256)))
    put("run_spec", "lines", "\1model=dcgan\nbatch-size=64,128\nlr=0.0001\nsync-bn=on\nseed=18446744073709551615\n"
        "loss-scale=dynamic\nmax-steps=5\ncomm-timeout=2.5\n")
    put("run_spec", "lines-odd-values", "\1lr=nan\nbeta1=inf\nepochs=-3\nbatch-size= 64 , 128\nunknown=1\n")


# flow.json of a case whose arrays are frames [2, 3, 4, 4] and mask [4, 4] (the target
# writes those itself): no mode byte, the input is the JSON text.
def flow_case_seeds():
    norm = {c: {"offset": 0.0, "scale": 0.1} for c in ("ux", "uy", "vorticity")}
    good = {"nx": 4, "ny": 4, "frames": 2, "re": 100.0, "u_lattice": 0.05, "diameter": 2.0, "every": 10,
            "strouhal": 0.18, "probe": {"x": 3, "y": 2}, "normalisation": norm}
    put("flow_case", "good", json.dumps(good))
    put("flow_case", "minimal", json.dumps({"normalisation": norm}))
    put("flow_case", "scale-zero", json.dumps(dict(good, normalisation=dict(norm, uy={"offset": 0, "scale": 0}))))
    put("flow_case", "wrong-shape", json.dumps(dict(good, nx=8)))
    put("flow_case", "types", json.dumps(dict(good, frames="2", probe=[1, 2], normalisation={"ux": 1})))
    put("flow_case", "not-json", "{\"nx\": 4,")
    # Issue 29: each field with what JSON writers produce by mistake: NaN (not JSON), a
    # number past double (1e400), a float where a whole number belongs, a whole number past
    # int64, a negative one; and invalid UTF-8 in a string.
    text = json.dumps(good)
    fields = ["nx", "ny", "frames", "re", "u_lattice", "diameter", "every", "strouhal"]
    for key in fields:
        for name, value in (("nan", "NaN"), ("1e400", "1e400"), ("float", "2.5"), ("huge", "18446744073709551616"),
                            ("negative", "-9223372036854775809"), ("1e300", "1e300")):
            put("flow_case", "field-%s-%s" % (key, name),
                text.replace('"%s": %s' % (key, json.dumps(good[key])), '"%s": %s' % (key, value), 1))
    for axis in ("x", "y"):
        for name, value in (("1e300", "1e300"), ("float", "1.5"), ("negative", "-3"), ("huge", "1e19")):
            probe = dict(good["probe"])
            probe[axis] = "@"
            put("flow_case", "field-probe-%s-%s" % (axis, name),
                json.dumps(dict(good, probe=probe)).replace('"@"', value))
    for channel in ("ux", "uy", "vorticity"):
        for part in ("offset", "scale"):
            for name, value in (("nan", "NaN"), ("1e400", "1e400"), ("1e300", "1e300"), ("tiny", "1e-300")):
                n = {c: dict(norm[c]) for c in norm}
                n[channel][part] = "@"
                put("flow_case", "field-normalisation-%s-%s-%s" % (channel, part, name),
                    json.dumps(dict(good, normalisation=n)).replace('"@"', value))
    put("flow_case", "bad-utf8", text.replace('"nx"', '"obstacle": "\xff\xfe", "nx"', 1).encode("latin-1"))
    put("flow_case", "bad-utf8-key", text.replace('"nx"', '"n\xffx"', 1).encode("latin-1"))


# safetensors: the file itself.
def safetensors(tensors, metadata=None, pad=True):
    header, buffer = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, (dtype, shape, payload) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(buffer), len(buffer) + len(payload)]}
        buffer += payload
    text = json.dumps(header).encode()
    if pad:
        text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + buffer


def safetensors_seeds():
    f4 = struct.pack("<6f", 0.5, -1.0, 2.25, 3e38, -0.0, 1e-40)
    good = {"fc.weight": ("F32", [2, 3], f4), "bn0.running_mean": ("F32", [2], struct.pack("<2f", 0, 1)),
            "bn0.num_batches_tracked": ("I64", [], struct.pack("<q", 7)),
            "w16": ("BF16", [2], b"\x80\x3f\x00\x40"), "h16": ("F16", [1, 1], b"\x00\x3c"),
            "f8": ("F64", [1], struct.pack("<d", 1.5)), "empty": ("F32", [0, 4], b"")}
    put("safetensors", "good", safetensors(good, {"model": "dcgan", "network": "generator"}))
    put("safetensors", "no-metadata-unpadded", safetensors({"a": ("F32", [1], struct.pack("<f", 1))}, pad=False))
    put("safetensors", "truncated", safetensors(good)[:-3])
    put("safetensors", "bad-dtype", safetensors({"a": ("U8", [2], b"ab")}))
    put("safetensors", "shape-mismatch", safetensors({"a": ("F32", [3], struct.pack("<2f", 1, 2))}))
    put("safetensors", "metadata-not-strings", safetensors({"a": ("F32", [1], b"\0\0\0\0")}, {"k": 1}))
    put("safetensors", "header-past-end", struct.pack("<Q", 1 << 20) + b"{}")
    put("safetensors", "not-json", struct.pack("<Q", 8) + b"{not js}")


# Stored job records: mode byte (bits 0-2 the state column, bit 3 a wrong id column,
# bit 4 the record as given; clear: appended to a good queued job-2), then the bytes.
def job_record_seeds():
    running_elsewhere = field(3, 0, varint(2)) + length_delimited(12, b"group-5") + field(6, 0, varint(1))
    put("job_record", "good", bytes([1]))
    put("job_record", "empty", bytes([16 | 1]))
    put("job_record", "garbage", bytes([16 | 1]) + b"\xff\xff\xff\xff\x0a")
    put("job_record", "another-id", bytes([8 | 1]))
    put("job_record", "state-disagrees", bytes([5]))
    put("job_record", "running-on-unknown-group", bytes([2]) + running_elsewhere)
    put("job_record", "state-not-a-job-state", bytes([7]) + field(3, 0, varint(7)))
    put("job_record", "other-name", bytes([1]) + length_delimited(1, b"job-17"))
    put("job_record", "bad-utf8-name", bytes([1]) + length_delimited(2, b"\xff\xfe"))


# Packed image sets (worker/data/packed_images_format.h), written here from the layout
# that header documents, independently of the C++ writer: the file itself.
def packed_string(b):
    return struct.pack("<I", len(b)) + b


def packed_images(size, channels, records, labels, sources, fit=b"crop", alpha=b"white", classes=()):
    record_bytes = channels * size * size
    stride = (record_bytes + 63) // 64 * 64
    count = len(records)
    body = b"".join(r + bytes(stride - record_bytes) for r in records)
    strings, offsets = b"", []
    for source in sources:
        offsets.append(len(strings))
        strings += packed_string(source)
    for s in [fit, alpha, b"catmull-rom"] + list(classes):
        strings += packed_string(s)
    index = b"".join(struct.pack("<Iiq", zlib.crc32(r), label, offset)
                     for r, label, offset in zip(records, labels, offsets))
    index_offset = 128 + count * stride
    strings_offset = index_offset + len(index)
    file_bytes = strings_offset + len(strings)
    header = b"GANTRYPK" + struct.pack("<II", 1, 128) + struct.pack(
        "<11Q", size, channels, count, stride, 128, index_offset, len(index), strings_offset, len(strings),
        len(classes), file_bytes) + struct.pack("<I", zlib.crc32(index + strings)) + bytes(16)
    header += struct.pack("<I", zlib.crc32(header))
    return header + body + index + strings


def packed_images_seeds():
    # Mode byte 0: the file as it is; 1: the target recomputes its CRCs first.
    def record(channels, size, seed):
        return bytes((i * 7 + seed * 31) & 0xFF for i in range(channels * size * size))

    labelled = packed_images(8, 3, [record(3, 8, i) for i in range(3)], [0, 1, 0],
                             [b"cat/a.png", b"dog/b.jpg", b"cat/c\xe9.png"], classes=[b"cat", b"dog"])
    put("packed_images", "labelled", b"\0" + labelled)
    put("packed_images", "labelled-crcs-fixed", b"\1" + labelled)
    put("packed_images", "unlabelled-gray", b"\0" + packed_images(8, 1, [record(1, 8, 4)], [-1], [b"x.png"]))
    put("packed_images", "keep-alpha-9x9", b"\0" + packed_images(9, 4, [record(4, 9, i) for i in range(2)],
                                                                [-1, -1], [b"a.webp", b"b.png"], alpha=b"keep"))
    put("packed_images", "truncated", b"\0" + labelled[:-7])
    put("packed_images", "header-only", b"\0" + labelled[:128])
    damaged = bytearray(labelled)
    damaged[128 + 5] ^= 1
    put("packed_images", "damaged-record", b"\0" + bytes(damaged))
    put("packed_images", "damaged-record-crcs-fixed", b"\1" + bytes(damaged))
    put("packed_images", "label-out-of-range",
        b"\1" + packed_images(8, 3, [record(3, 8, 0)], [2], [b"a.png"], classes=[b"cat", b"dog"]))
    put("packed_images", "keep-with-3-channels",
        b"\1" + packed_images(8, 3, [record(3, 8, 0)], [-1], [b"a.png"], alpha=b"keep"))
    put("packed_images", "source-out-of-order",
        b"\1" + packed_images(8, 1, [record(1, 8, 0), record(1, 8, 1)], [-1, -1], [b"a", b"b"])
        .replace(struct.pack("<q", 5), struct.pack("<q", 6), 1))

if __name__ == "__main__":
    idx_seeds()
    npy_seeds()
    safetensors_seeds()
    checkpoint_seeds()
    run_file_seeds()
    run_spec_seeds()
    flow_case_seeds()
    job_record_seeds()
    packed_images_seeds()
