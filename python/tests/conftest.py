"""Fixtures of the client's tests: a real gantry-coordinator (with a token) and a real
2-rank worker pool on loopback, in a scratch folder of pytest's own (tmp_path_factory:
unique per run), stopped at the end whatever happened."""
import os
import shutil
import subprocess

import pytest

from processes import FASHION_MNIST, Coordinator, Pool, binary

TOKEN = "py-client-0123456789abcdef0123456789abcdef"


def _check_prerequisites():
    for variable in ("GANTRY_COORDINATOR_BIN", "GANTRY_WORKER_BIN", "GANTRY_CLI_BIN", "GANTRY_MPIEXEC"):
        binary(variable)
    if not any(os.path.exists(os.path.join(FASHION_MNIST, name))
               for name in ("train-images-idx3-ubyte.gz", "train-images-idx3-ubyte")):
        raise RuntimeError("no Fashion-MNIST in {}: run scripts/install_deps.sh (dataset-fashion-mnist)".format(
            FASHION_MNIST))


class Cluster:
    """A coordinator with a token file, and a pool that reports every 0.3 s. A second data
    root, `flow_dir`, holds a small flow case (`case_dir`, written by gantry-worker
    make-flow) for a pix2pix run and its rollout."""

    def __init__(self, folder):
        self.folder = folder
        self.token_file = os.path.join(folder, "token")
        with open(self.token_file, "w") as f:
            f.write(TOKEN + "\n")
        self.flow_dir = os.path.join(folder, "flow")
        self.case_dir = os.path.join(self.flow_dir, "case-1")
        made = subprocess.run([binary("GANTRY_WORKER_BIN"), "make-flow", "--out", self.case_dir, "--nx", "96", "--ny",
                               "48", "--frames", "30", "--seed", "1"], capture_output=True, text=True, timeout=120)
        assert made.returncode == 0, made.stdout + made.stderr
        self.coordinator = Coordinator(folder, os.path.join(folder, "gantry.db"),
                                       ["--token-file", self.token_file, "--data-root", self.flow_dir])
        self.pool = Pool(folder, self.coordinator.address, ["--token", self.token_file, "--report-seconds", "0.3"])

    @property
    def address(self):
        return self.coordinator.address

    def stop(self):
        self.pool.process.stop()
        self.coordinator.process.stop()


@pytest.fixture(scope="session", autouse=True)
def prerequisites():
    """Fails (never skips) every test when a program or the dataset is missing."""
    try:
        _check_prerequisites()
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    folder = str(tmp_path_factory.mktemp("cluster"))
    started = Cluster(folder)
    yield started
    started.stop()
    logs = {name: open(os.path.join(folder, name), errors="replace").read()[-4000:]
            for name in os.listdir(folder) if name.endswith(".log")}
    for name, text in sorted(logs.items()):
        print("---- {} (tail) ----\n{}".format(name, text))
    shutil.rmtree(os.path.join(folder, "runs"), ignore_errors=True)


@pytest.fixture
def no_gantry_environment(monkeypatch):
    """The test's Client sees no GANTRY_COORDINATOR / GANTRY_TOKEN unless it sets them."""
    monkeypatch.delenv("GANTRY_COORDINATOR", raising=False)
    monkeypatch.delenv("GANTRY_TOKEN", raising=False)
