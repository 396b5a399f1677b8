#!/usr/bin/env python3
"""Runs a documentation page's walkthrough as written: its ```sh (and ```bash) blocks in one bash
session and its ```python blocks in one Python interpreter, in the page's order, from
the repository root, printing each block's output under its line number.

    python3 scripts/run_walkthrough.py docs/python.md [--python /tmp/gantry-demo/venv/bin/python]
        [--skip-line N ...] [--timeout SECONDS]

Contract: blocks run in page order; shell state (variables, `cd`, background jobs) carries
from one sh block to the next, Python state from one python block to the next, and the
Python interpreter starts with the shell's exported variables and folder as they are at
the first python block (so a sh block before it may create the --python interpreter). A
block in which a command fails runs to its end, as in a terminal, and then stops the run
with exit 1, naming its line; a block still running after --timeout seconds (default
900) is killed, with every process it started, and fails the same way. At the end every
background job the shell or the interpreter started is killed. --skip-line N leaves out
the block opening at line N (for blocks that need what a machine lacks: say why where
you use it). ```text blocks (synopses with
placeholders) are not run. As root, mpirun refuses to start without
--allow-run-as-root, which the pages write only where they show a root shell: the run
sets Open MPI's OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM) instead, and says so.

A maintenance tool for docs (docs/testing.md, "The test command"): it is not in the test
command, because the walkthroughs train models for minutes.
"""
import argparse
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading

FENCE = re.compile(r"^```(\w*)\s*$")
SENTINEL = "==== walkthrough block done:"


def blocks(page: pathlib.Path):
    """Yields (line, language, text) for each fenced block with a language."""
    language, start, body = None, 0, []
    for number, line in enumerate(page.read_text().splitlines(), 1):
        fence = FENCE.match(line)
        if fence and language is None:
            language, start, body = fence.group(1), number, []
        elif line.startswith("```") and language is not None:
            if language:
                yield start, language, "\n".join(body) + "\n"
            language = None
        elif language is not None:
            body.append(line)


# The shell side: one bash for the whole page, so that variables (exported or not), the
# working folder and background jobs carry from block to block. Each block is written to
# a file and sourced; an ERR trap marks the block failed at its first failing command
# (the block goes on, as a reader's terminal would, but the page stops after it).
class ShellSession:
    def __init__(self, state: pathlib.Path):
        self.state = state
        self.count = 0
        # A session of its own: at a timeout the whole group goes (the block's commands
        # hold the output pipe; killing bash alone would leave them running).
        self.process = subprocess.Popen(["bash", "--norc", "--noprofile"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, start_new_session=True)
        self.send("trap '__walkthrough_failed=$?' ERR\n")

    def send(self, text: str):
        self.process.stdin.write(text)
        self.process.stdin.flush()

    def run(self, text: str, timeout: float) -> int:
        """Runs one block, echoing its output; 0, or the first failing command's status."""
        self.count += 1
        block = self.state / f"block-{self.count}.sh"
        block.write_text(text)
        self.send(f"__walkthrough_failed=0; source {block} < /dev/null 2>&1; "
                  f"export -p > {self.state}/env; pwd > {self.state}/cwd; jobs -p >> {self.state}/pids; "
                  f"echo '{SENTINEL}' $__walkthrough_failed\n")
        return read_until_sentinel(self.process, timeout)

    def close(self):
        close_session(self.process)


def kill_group(process, sig):
    """Sends sig to every process of process's group (its session), if any is left."""
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def close_session(process):
    """Ends a session's input and waits 30 s for it to finish; then kills its group."""
    if process.poll() is None:
        process.stdin.close()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            kill_group(process, signal.SIGKILL)


def read_until_sentinel(process, timeout: float) -> int:
    """Echoes process's output up to the sentinel line; the status it carries (-9: killed
    at the timeout or gone)."""
    timer = threading.Timer(timeout, kill_group, (process, signal.SIGKILL))
    timer.start()
    try:
        for line in process.stdout:
            if line.startswith(SENTINEL):
                return int(line.split()[-1])
            print(line, end="", flush=True)
        return -9
    finally:
        timer.cancel()


# The Python side: one interpreter for the whole page, so that state carries from cell to
# cell; it reads each cell as a length-prefixed UTF-8 text on stdin, runs it, and answers
# with a line SENTINEL and the cell's status (0, or 1 after a traceback).
SERVER = f"""
import sys, traceback
namespace = {{"__name__": "__main__"}}
while True:
    size = sys.stdin.readline()
    if not size:
        break
    cell = sys.stdin.read(int(size))
    try:
        exec(compile(cell, "cell", "exec"), namespace)
        status = 0
    except BaseException:
        traceback.print_exc()
        status = 1
    sys.stdout.flush(); sys.stderr.flush()
    print("{SENTINEL}", status, flush=True)
"""


class PythonSession:
    def __init__(self, interpreter: str, state: pathlib.Path):
        environment = dict(os.environ)
        env_file = state / "env"
        for line in env_file.read_text().splitlines() if env_file.exists() else []:
            match = re.match(r'declare -x (\w+)="(.*)"$', line)
            if match:
                environment[match.group(1)] = match.group(2)
        cwd = (state / "cwd").read_text().strip() if (state / "cwd").exists() else None
        self.process = subprocess.Popen([interpreter, "-u", "-c", SERVER], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, env=environment, cwd=cwd,
                                        start_new_session=True)

    def run(self, text: str, timeout: float) -> int:
        """Runs one cell, echoing its output; the cell's status."""
        self.process.stdin.write(f"{len(text)}\n{text}")
        self.process.stdin.flush()
        return read_until_sentinel(self.process, timeout)

    def close(self):
        close_session(self.process)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", type=pathlib.Path)
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--skip-line", type=int, action="append", default=[])
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args()
    if os.geteuid() == 0:
        os.environ.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        print("==== as root: OMPI_ALLOW_RUN_AS_ROOT=1 (mpirun as the pages' non-root user)", flush=True)
    state = pathlib.Path(tempfile.mkdtemp(prefix="walkthrough-"))
    shell = ShellSession(state)
    python = None
    status = 0
    try:
        for line, language, text in blocks(args.page):
            if line in args.skip_line or language not in ("sh", "bash", "python"):
                continue
            print(f"==== {args.page}:{line} ({language})", flush=True)
            if language in ("sh", "bash"):
                code = shell.run(text, args.timeout)
            else:
                python = python or PythonSession(args.python, state)
                code = python.run(text, args.timeout)
            if code != 0:
                why = f"exit {code}" if code >= 0 else f"killed after {args.timeout:.0f} s, or gone"
                print(f"==== {args.page}:{line}: the block failed ({why})", flush=True)
                status = 1
                break
    finally:
        if python is not None:
            python.close()
        shell.close()
        pids = (state / "pids").read_text().split() if (state / "pids").exists() else []
        for pid in pids:
            subprocess.run(["kill", pid], stderr=subprocess.DEVNULL)
        for session in (shell, python):
            if session is not None:
                kill_group(session.process, signal.SIGTERM)
    print(f"==== {args.page}: {'passed' if status == 0 else 'FAILED'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
