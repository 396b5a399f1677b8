#!/usr/bin/env python3
"""Every command-line flag the documentation writes is one a program accepts.

Reads README.md, docs/*.md and the other READMEs below, takes every `--flag` in them, and
fails listing each one that is not
  - in the --help of gantry, gantry-worker or gantry-coordinator (or of one of their
    subcommands), given as PROGRAM=PATH arguments;
  - an option literal ("--flag") in the sources of the project's own scripts and
    benchmarks (bench/, scripts/, python/tests/, tests/images/), whose flags the docs also use;
  - a flag of an external tool listed by name in EXTERNAL below (mpirun, cmake, pip, ...).

  check_doc_flags.py ROOT gantry=BIN gantry-worker=BIN gantry-coordinator=BIN
  check_doc_flags.py ROOT ... --plant 'docs/x.md=--no-such-flag'   proof that it can fail
"""
import glob
import os
import re
import subprocess
import sys

DOCS = ['README.md', 'docs/*.md', 'coordinator/README.md', 'deploy/README.md', 'helm/gantry/README.md',
        'bench/torch/README.md', 'python/README.md', 'tests/fuzz/README.md']
SOURCES = ['bench/*.cc', 'bench/*.sh', 'bench/torch/*.py', 'bench/torch/*.sh', 'scripts/*.sh', 'scripts/*.py',
           'python/tests/*.sh', 'tests/helm/*.sh', 'tests/layering/*.py', 'tests/docs/*.py', 'tests/images/*.cc']
FLAG = re.compile(r'(?<![\w/.-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*')

# Flags of other programs the docs show, by program (facts of those programs' interfaces).
EXTERNAL = {
    'mpirun': '--allow-run-as-root --oversubscribe --hostfile --mca --bind-to --map-by --host',
    'cmake / ctest': '--build --target --test-dir --output-on-failure --timeout --parallel --preset -L -R '
                     '--rerun-failed --show-only --config --install',
    'apt-get / dpkg': '--no-install-recommends --yes --download-only',
    'pip / venv': '--no-build-isolation --no-index --system-site-packages --target --user --editable',
    'helm / kubectl': '--set --set-string --namespace --create-namespace --values --api-versions --server-side '
                      '--wait --timeout --strict --version --logs --reuse-values',
    'chromium': '--headless --screenshot --dump-dom --no-sandbox --disable-gpu --window-size --virtual-time-budget '
                '--hide-scrollbars --user-data-dir --no-first-run --disable-dev-shm-usage',
    'tensorboard': '--logdir --bind-all --port',
    'openssl': '--rand',
    'git / curl / tools': '--depth --recursive --silent --fail --output --help --version --only',
    'gtest': '--gtest-filter --gtest-brief',
    'buildah / mmdebstrap / qemu': '--variant --arch --squash --layers',
}


def read_docs(root, plants):
    texts = {}
    for pattern in DOCS:
        for path in sorted(glob.glob(os.path.join(root, pattern))):
            texts[os.path.relpath(path, root)] = open(path, errors='replace').read()
    for path, text in plants:
        texts[path] = texts.get(path, '') + '\n' + text + '\n'
    return texts


def help_text(binary, args):
    try:
        out = subprocess.run([binary] + args + ['--help'], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        sys.exit(f'FAIL: cannot run {binary} {" ".join(args)} --help: {e}')
    return out.stdout + out.stderr


def subcommands(help_out):
    """The subcommand names of a CLI11 help text (lines under "Subcommands:")."""
    names, inside = [], False
    for line in help_out.splitlines():
        if line.startswith('Subcommands:'):
            inside = True
        elif inside and line.startswith('  ') and line.strip():
            names.append(line.split()[0])
        elif inside and line and not line.startswith(' '):
            inside = False
    return names


def program_flags(binaries):
    known = set()
    for binary in binaries.values():
        top = help_text(binary, [])
        known |= set(FLAG.findall(top))
        for sub in subcommands(top):
            known |= set(FLAG.findall(help_text(binary, [sub])))
    return known


def source_flags(root):
    known = set()
    literal = re.compile(r'["\'(|\s](--[a-z][a-z0-9-]*)')
    for pattern in SOURCES:
        for path in glob.glob(os.path.join(root, pattern)):
            known |= set(literal.findall(open(path, errors='replace').read()))
    return known


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    root, binaries, plants = argv[1], {}, []
    args = argv[2:]
    while args:
        if args[0] == '--plant':
            plants.append(tuple(args[1].split('=', 1)))
            args = args[2:]
            continue
        name, _, path = args[0].partition('=')
        binaries[name] = path
        args = args[1:]
    known = program_flags(binaries) | source_flags(root)
    external = {f for flags in EXTERNAL.values() for f in flags.split()}
    unknown = []
    for path, text in read_docs(root, plants).items():
        for n, line in enumerate(text.splitlines(), 1):
            for flag in FLAG.findall(line):
                if flag not in known and flag not in external:
                    unknown.append(f'{path}:{n}: {flag}')
    for u in unknown:
        print('FAIL ' + u + ' (no program, script or listed external tool takes it)')
    if unknown:
        print(f'{len(unknown)} documented flag(s) that nothing accepts: fix the docs (or the program)')
        return 1
    print(f'every documented flag is accepted ({len(known)} flags known from {", ".join(binaries)} and the scripts)')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
