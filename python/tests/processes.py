"""Real gantry processes for the client's tests, as the C++ end-to-end tests start them
(tests/coordinator/process_harness.cc, tests/pool/e2e/pool_harness.cc): gantry-coordinator
on a free loopback port, found through its --port-file, and `mpirun -np 2 gantry-worker
serve` against it. Every wait is bounded; every process is started in a session of its
own and killed by its process group on stop, so no rank outlives a test.
"""
import os
import signal
import subprocess
import time

# Debian's Fashion-MNIST (dataset-fashion-mnist, scripts/install_deps.sh), under this data root.
DATA_ROOT = "/usr/share/datasets"
FASHION_MNIST = DATA_ROOT + "/fashion-mnist"


def binary(variable):
    """The program the CTest passes in `variable` (GANTRY_COORDINATOR_BIN, ...)."""
    path = os.environ.get(variable, "")
    if not path or not os.access(path, os.X_OK):
        raise RuntimeError("{} must name the program to test (got {!r}); run the tests through "
                           "`ctest -R python_client`, which passes the built binaries".format(variable, path))
    return path


def child_environment():
    """This process's environment without the variables that would redirect a child."""
    return {k: v for k, v in os.environ.items() if k not in ("GANTRY_COORDINATOR", "GANTRY_TOKEN")}


def wait_until(done, timeout_seconds, interval=0.05):
    """Calls `done` until it is true or `timeout_seconds` passed; its last value."""
    deadline = time.monotonic() + timeout_seconds
    while True:
        value = done()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


class Process:
    """A child with its output in `log_path`."""

    def __init__(self, argv, log_path):
        self.log_path = log_path
        with open(log_path, "ab") as log:
            self.popen = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          env=child_environment(), start_new_session=True)

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def signal(self, sig):
        if self.popen.poll() is None:
            os.killpg(self.popen.pid, sig)

    def wait(self, timeout_seconds):
        """The exit code, or None after killing a process still running at the timeout."""
        try:
            return self.popen.wait(timeout=timeout_seconds)
        except subprocess.TimeoutExpired:
            self.stop()
            return None

    def stop(self):
        """Kills the process and everything in its session (mpirun's ranks)."""
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.popen.wait(timeout=30)


class Coordinator:
    """gantry-coordinator on 127.0.0.1 over `db`, on a free port (or `port`, for a
    restart on the same address). Each start has its own port file and log."""

    def __init__(self, folder, db, flags=(), port=0, start_number=1):
        self.port_file = os.path.join(folder, "port-{}".format(start_number))
        argv = [binary("GANTRY_COORDINATOR_BIN"), "--listen", "127.0.0.1:{}".format(port), "--db", db,
                "--data-root", DATA_ROOT, "--port-file", self.port_file] + list(flags)
        self.process = Process(argv, os.path.join(folder, "coordinator-{}.log".format(start_number)))
        self.port = wait_until(self._read_port, 10)
        if not self.port:
            self.process.stop()
            raise RuntimeError("gantry-coordinator did not start:\n" + self.process.log())

    def _read_port(self):
        try:
            with open(self.port_file) as f:
                return int(f.read().strip() or 0)
        except (OSError, ValueError):
            return 0

    @property
    def address(self):
        return "127.0.0.1:{}".format(self.port)


class Pool:
    """`mpirun -np 2 gantry-worker serve --coordinator ADDRESS --runs-dir FOLDER/runs FLAGS`."""

    def __init__(self, folder, address, flags=(), log_name="pool.log"):
        self.runs_dir = os.path.join(folder, "runs")
        argv = [binary("GANTRY_MPIEXEC"), "--allow-run-as-root", "--oversubscribe", "-np", "2",
                binary("GANTRY_WORKER_BIN"), "serve", "--coordinator", address, "--runs-dir", self.runs_dir]
        self.process = Process(argv + list(flags), os.path.join(folder, log_name))

    def run_file(self, job_id, name):
        """The contents of a file of a job's run folder."""
        with open(os.path.join(self.runs_dir, job_id, name)) as f:
            return f.read()


def run_cli(args, timeout_seconds=30):
    """`gantry ARGS` (the C++ CLI); its CompletedProcess with stdout and stderr as text."""
    return subprocess.run([binary("GANTRY_CLI_BIN")] + list(args), capture_output=True, text=True,
                          timeout=timeout_seconds, env=child_environment())
