#!/usr/bin/env python3
"""The layering check: every project #include and every link between the project's
libraries must be an edge that docs/layering.txt allows.

docs/layering.txt lists the components (source folders) bottom up, each with the
components it may use:

    worker/train: common runspec report worker/checkpoint ...

A component may always use itself. A folder split into components (coordinator/, with
coordinator/store, coordinator/jobs, ...) holds no sources of its own but its program's
entry point (a file named *_main.cc): every other source lives in the component folder of
its concept. An #include "a/b/c.h" belongs to the component whose
folder is the longest prefix of the path; a library gantry_x belongs to the folder its
CMake call builds it from (gantry_library(gantry_x dir ...) or add_library in a folder's
own CMakeLists.txt). Tests, benchmarks and the generated proto code are not components:
they may use anything, and are not checked.

  check_layering.py ROOT                     check; exit 1 listing each edge not allowed
  check_layering.py ROOT --plant PATH=TEXT   the same, as if TEXT were appended to PATH
                                             (a new file if PATH does not exist): proof
                                             that the check fails on a wrong edge
  check_layering.py ROOT --write-docs        rewrite the generated part of
                                             docs/architecture.md from the table
  check_layering.py ROOT --check-docs        fail when that part differs from the table
"""
import os
import re
import sys

TABLE = 'docs/layering.txt'
DOCS = 'docs/architecture.md'
BEGIN = '<!-- layering: generated from docs/layering.txt by tests/layering/check_layering.py --write-docs -->'
END = '<!-- layering: end -->'
SOURCE_EXTS = ('.h', '.cc', '.cu', '.cuh')
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
LIBRARY_CALL_RE = re.compile(r'gantry_library\(\s*(gantry_\w+)\s+(\S+)((?:\s+[^)\s]+)*)\s*\)', re.S)
ADD_LIBRARY_RE = re.compile(r'add_library\(\s*(gantry_\w+)\b')
LINK_RE = re.compile(r'target_link_libraries\(\s*(gantry_\w+)((?:\s+[^)\s]+)*)\s*\)', re.S)


def read_table(root):
    """{component: set of allowed components}, in the table's order."""
    table = {}
    for n, line in enumerate(open(os.path.join(root, TABLE)), 1):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        if ':' not in line:
            sys.exit(f'{TABLE}:{n}: expected "component: allowed components", got "{line}"')
        name, deps = line.split(':', 1)
        table[name.strip()] = set(deps.split())
    unknown = {d for deps in table.values() for d in deps} - set(table)
    if unknown:
        sys.exit(f'{TABLE}: allows components it does not list: {", ".join(sorted(unknown))}')
    order = list(table)
    for name, deps in table.items():
        upward = [d for d in deps if order.index(d) >= order.index(name)]
        if upward:
            sys.exit(f'{TABLE}: {name} may use {", ".join(upward)}, listed at or after it (the table is bottom up)')
    return table


# Generated headers are included by their generated paths: they belong to proto/.
GENERATED_PREFIXES = ('gantry/v1/', 'tensorboard/', 'grpc/health/')


def component_of(path, components):
    """The component whose folder is the longest prefix of `path`, or None."""
    if path.startswith(GENERATED_PREFIXES) and 'proto' in components:
        return 'proto'
    best = None
    for c in components:
        if path.startswith(c + '/') and (best is None or len(c) > len(best)):
            best = c
    return best


def load_files(root, plants):
    """{relative path: text} of the sources and CMakeLists.txt files outside tests, bench
    and build folders, with the plants applied."""
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if os.path.samefile(dirpath, root):
            dirnames[:] = [d for d in dirnames if d not in ('tests', 'bench') and not d.startswith(('.', 'build'))]
        rel_dir = os.path.relpath(dirpath, root)
        for f in filenames:
            if f.endswith(SOURCE_EXTS) or f == 'CMakeLists.txt':
                rel = os.path.normpath(os.path.join(rel_dir, f))
                files[rel] = open(os.path.join(dirpath, f), errors='replace').read()
    for path, text in plants:
        files[path] = files.get(path, '') + '\n' + text + '\n'
    return files


def library_folders(files):
    """{gantry_x: folder} from the CMake files."""
    libs = {}
    for path, text in files.items():
        if not path.endswith('CMakeLists.txt'):
            continue
        folder = os.path.dirname(path)
        for m in LIBRARY_CALL_RE.finditer(text):
            libs[m.group(1)] = os.path.normpath(os.path.join(folder, m.group(2)))
        for m in ADD_LIBRARY_RE.finditer(text):
            # add_library(gantry_x ...) in a parent folder builds folder/x when it exists
            # (worker/CMakeLists.txt builds gantry_tensor from worker/tensor).
            sub = os.path.join(folder, m.group(1)[len('gantry_'):])
            libs.setdefault(m.group(1), sub if any(p.startswith(sub + '/') for p in files) else folder)
    return libs


def link_edges(files, libs):
    """(cmake file, library, linked library) for every link between project libraries."""
    edges = []
    for path, text in files.items():
        if not path.endswith('CMakeLists.txt'):
            continue
        for m in LIBRARY_CALL_RE.finditer(text):
            edges += [(path, m.group(1), d) for d in m.group(3).split() if d in libs]
        for m in LINK_RE.finditer(text):
            edges += [(path, m.group(1), d) for d in m.group(2).split() if d in libs]
    return edges


def stray_sources(files, table):
    """A source directly in a component whose concepts have folders of their own (a
    component that is the parent of others), other than a program's *_main.cc."""
    parents = {c for c in table if any(o.startswith(c + '/') for o in table)}
    found = []
    for path in sorted(files):
        folder = os.path.dirname(path)
        if folder in parents and path.endswith(SOURCE_EXTS) and not path.endswith('_main.cc'):
            found.append(f'{path}: a source directly in {folder}/, which is split by concept: '
                         f'move it into the folder of its concept ({", ".join(sorted(o for o in table if o.startswith(folder + "/")))})')
    return found


def violations(root, plants):
    table = read_table(root)
    files = load_files(root, plants)
    found = []
    for path, text in sorted(files.items()):
        here = component_of(path, table)
        if here is None or not path.endswith(SOURCE_EXTS):
            continue
        for target in INCLUDE_RE.findall(text):
            there = component_of(target, table)
            if there and there != here and there not in table[here]:
                found.append(f'{path}: includes "{target}": {here} -> {there} is not an allowed edge')
    found += stray_sources(files, table)
    libs = library_folders(files)
    for path, lib, dep in link_edges(files, libs):
        here, there = component_of(libs[lib] + '/x', table), component_of(libs[dep] + '/x', table)
        if here and there and here != there and there not in table[here]:
            found.append(f'{path}: {lib} links {dep}: {here} -> {there} is not an allowed edge')
    return found


def docs_section(root):
    table = read_table(root)
    width = max(len(c) for c in table)
    lines = ['```', 'component' + ' ' * (width - 9) + '  may use (the layering test checks every #include and link)']
    for c, deps in table.items():
        order = [d for d in table if d in deps]
        lines.append(f'{c:<{width}}  {" ".join(order) if order else "-"}')
    lines.append('```')
    return '\n'.join([BEGIN] + lines + [END])


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    root, args = argv[1], argv[2:]
    if args and args[0] in ('--write-docs', '--check-docs'):
        path = os.path.join(root, DOCS)
        text = open(path).read()
        if BEGIN not in text or END not in text:
            sys.exit(f'{DOCS}: lacks the markers of the generated section ({BEGIN} ... {END})')
        new = text[:text.index(BEGIN)] + docs_section(root) + text[text.index(END) + len(END):]
        if args[0] == '--write-docs':
            open(path, 'w').write(new)
            return 0
        if new != text:
            print(f'FAIL: {DOCS} does not show {TABLE}; run tests/layering/check_layering.py . --write-docs')
            return 1
        print(f'{DOCS} matches {TABLE}')
        return 0
    plants = []
    while args:
        if args[0] != '--plant' or len(args) < 2 or '=' not in args[1]:
            sys.exit(__doc__)
        plants.append(tuple(args[1].split('=', 1)))
        args = args[2:]
    found = violations(root, plants)
    for v in found:
        print('FAIL ' + v)
    if found:
        print(f'{len(found)} problem(s) with {TABLE}: fix the include, link or file, or (if the design changed) '
              f'the table and docs/architecture.md')
        return 1
    print(f'layering: every include and link is an edge of {TABLE}')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
