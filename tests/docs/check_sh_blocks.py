#!/usr/bin/env python3
"""Every ```sh (or ```bash) block of the documentation is a command one can paste.

The convention (docs/testing.md, "Walkthroughs"): a sh block runs as written, in the
page's order (scripts/run_walkthrough.py runs them); a synopsis with placeholders is a
```text block. This check fails, naming page and line, on a sh block that
  - bash cannot parse (`bash -n`);
  - holds a placeholder: `...` outside a comment, an optional part `[--flag ...]`, or an
    option followed by an upper-case word such as `--run RUN` or `--case DIR` (not an
    expansion: `$VAR` is fine).

  check_sh_blocks.py ROOT
  check_sh_blocks.py ROOT --plant 'docs/x.md=gantry-worker generate --run RUN'   proof that it can fail
"""
import re
import subprocess
import sys

from check_doc_flags import read_docs  # the same pages, and --plant appends to one

FENCE = re.compile(r'^```(\w*)\s*$')
PLACEHOLDERS = [
    (re.compile(r'\.\.\.'), 'an elision (...)'),
    (re.compile(r'\[--?[a-z]'), 'an optional part ([--flag ...])'),
    (re.compile(r'(?<![\w-])--[a-z][a-z0-9-]*[ =](?:[A-Z][A-Z0-9_]*)(?=[\s,\]|]|$)'), 'an upper-case placeholder'),
]


def sh_blocks(text):
    """Yields (line, body) for each sh or bash block: the line is the opening fence's."""
    language, start, body = None, 0, []
    for number, line in enumerate(text.splitlines(), 1):
        fence = FENCE.match(line)
        if fence and language is None:
            language, start, body = fence.group(1), number, []
        elif line.startswith('```') and language is not None:
            if language in ('sh', 'bash'):
                yield start, '\n'.join(body) + '\n'
            language = None
        elif language is not None:
            body.append(line)


def without_comments(body):
    """The block with each line's `# comment` removed (a `#` after a blank, outside quotes
    in the simple sense these blocks need)."""
    return '\n'.join(re.sub(r'(^|\s)#.*$', '', line) for line in body.splitlines())


def problems(path, text):
    for line, body in sh_blocks(text):
        parsed = subprocess.run(['bash', '-n'], input=body, capture_output=True, text=True)
        if parsed.returncode != 0:
            yield f'{path}:{line}: bash cannot parse the block: {parsed.stderr.strip()}'
        code = without_comments(body)
        for pattern, what in PLACEHOLDERS:
            found = pattern.search(code)
            if found:
                yield (f'{path}:{line}: {what} "{found.group(0).strip()}" in a sh block: '
                       'make it runnable as written or fence it as ```text')


def main(argv):
    if len(argv) < 2:
        sys.exit(__doc__)
    root, plants = argv[1], []
    rest = argv[2:]
    while rest:
        if rest[0] == '--plant' and len(rest) > 1:
            path, _, body = rest[1].partition('=')
            plants.append((path, f'```sh\n{body}\n```\n'))
            rest = rest[2:]
        else:
            sys.exit(f'unknown argument {rest[0]}')
    texts = read_docs(root, plants)
    found = [p for path, text in texts.items() for p in problems(path, text)]
    blocks = sum(1 for text in texts.values() for _ in sh_blocks(text))
    for p in found:
        print('FAIL:', p)
    if found:
        return 1
    print(f'{blocks} sh blocks in {len(texts)} pages: all parse, none holds a placeholder')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
