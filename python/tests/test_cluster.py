"""The client against a real gantry-coordinator (with a token) and a real 2-rank pool:
a sweep submitted, watched to its end and reported exactly as the run folder has it, a
cancel, and the coordinator's refusals as the right exceptions. The tests of this module
share one coordinator and pool and run in file order."""
import json
import os
import sys
import time

import pytest

import gantry
from conftest import TOKEN
from processes import FASHION_MNIST, run_cli

# 512 images: 16 steps at batch 32 and 8 at 64, a few seconds on 2 ranks.
SWEEP = dict(model="dcgan", dataset="fashion-mnist", data_dir=FASHION_MNIST, limit_images=512,
             batch_size=[32, 64], epochs=1, quality="off")


def _pandas_or_none():
    """pandas when installed (optional: the DataFrame paths are checked when it is)."""
    try:
        import pandas
    except ImportError:
        return None
    return pandas


@pytest.fixture(scope="module")
def client(cluster):
    with gantry.Client(cluster.address, token=cluster.token_file, timeout=20) as c:
        yield c


@pytest.fixture(scope="module")
def sweep(client):
    """The sweep, submitted and watched to its end: (job, every event)."""
    job = client.submit(world_size=2, name="python sweep", **SWEEP)
    events = list(job.watch(timeout=120, reconnect=20))
    return job, events


def test_a_watched_sweep_ends_succeeded_with_progress_and_epoch_rows(sweep):
    job, events = sweep
    assert job.id.startswith("job-") and job.name == "python sweep"
    final = events[-1]
    assert isinstance(final, gantry.StateChanged) and final.state is gantry.JobState.SUCCEEDED, events[-3:]
    states = [e.state for e in events if isinstance(e, gantry.StateChanged)]
    assert states[0] is gantry.JobState.QUEUED and gantry.JobState.RUNNING in states
    stored = [e.sequence for e in events if not isinstance(e, gantry.Progress)]
    assert stored == sorted(set(stored)) and stored[0] == 1, "each stored entry once, in order"
    epochs = [e for e in events if isinstance(e, gantry.EpochEnded)]
    assert [(e.batch_size, e.epoch) for e in epochs] == [(32, 1), (64, 1)]
    assert all(e.samples_per_s > 0 and e.d_loss > 0 and e.g_loss > 0 for e in epochs)
    assert all(e.quality is None for e in epochs), "--quality off: not scored"
    progress = [e for e in events if isinstance(e, gantry.Progress)]
    assert progress, "the pool reports every 0.3 s; 24 steps take longer than that"
    for p in progress:
        assert p.batch_size in (32, 64) and 1 <= p.step <= p.steps_per_epoch and p.samples_per_s > 0
        assert 0 <= p.fraction_done <= 1 and p.eta_seconds is not None and p.eta_seconds >= 0
    assert progress[0].fraction_done <= progress[-1].fraction_done
    assert job.state is gantry.JobState.SUCCEEDED
    assert job.wait(timeout=10) is gantry.JobState.SUCCEEDED, "an ended job's wait returns at once"


def test_the_report_is_the_run_folders_epochs_csv(cluster, sweep, monkeypatch):
    job, events = sweep
    rows = job.report()
    assert [(r["batch_size"], r["epoch"], r["world_size"]) for r in rows] == [(32, 1, 2), (64, 1, 2)]
    assert rows == [e.row for e in events if isinstance(e, gantry.EpochEnded)]
    epochs_csv = cluster.pool.run_file(job.id, "epochs.csv")
    assert list(rows[0]) == epochs_csv.splitlines()[0].split(","), "the columns, in order"
    assert job.report_csv() == epochs_csv, "every column, byte for byte"
    pandas = _pandas_or_none()
    if pandas is not None:
        frame = job.report(as_dataframe=True)
        assert isinstance(frame, pandas.DataFrame) and list(frame.columns) == list(rows[0])
        assert frame.to_dict("records") == rows
    monkeypatch.setitem(sys.modules, "pandas", None)  # as if not installed
    with pytest.raises(ImportError, match="Job.report: a DataFrame needs pandas"):
        job.report(as_dataframe=True)


def test_the_timing_table_is_what_gantry_report_prints(cluster, sweep, monkeypatch):
    job, _ = sweep
    timing = job.timing()
    assert [s["batch_size"] for s in timing.summaries] == [32, 64]
    assert all(s["epochs"] == 1 and s["samples_per_s"] > 0 for s in timing.summaries)
    assert timing.summaries[0]["change_vs_smallest"] == 0
    printed = run_cli(["--coordinator", cluster.address, "--token", cluster.token_file, "report", job.id])
    assert printed.returncode == 0, printed.stderr
    assert str(timing) == printed.stdout
    assert timing.markdown.startswith("# Training time per batch size (2 ranks, fp32)")
    if _pandas_or_none() is not None:
        assert timing.as_dataframe().to_dict("records") == timing.summaries
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="Timing.as_dataframe: a DataFrame needs pandas"):
        timing.as_dataframe()


def test_jobs_and_groups(client, sweep):
    job, _ = sweep
    listed = {j.id: j for j in client.jobs()}
    assert job.id in listed and listed[job.id].name == "python sweep"
    assert job.id in [j.id for j in client.jobs(state="succeeded")]
    assert job.id not in [j.id for j in client.jobs(state=gantry.JobState.QUEUED)]
    with pytest.raises(gantry.InvalidSpec, match="unknown job state 'done'"):
        client.jobs(state="done")
    groups = client.groups()
    assert len(groups) == 1 and groups[0]["world_size"] == 2 and len(groups[0]["hosts"]) == 2
    assert groups[0]["state"] in ("idle", "busy")


def test_an_ended_job_cannot_be_cancelled(sweep):
    job, _ = sweep
    with pytest.raises(gantry.Conflict) as refused:
        job.cancel()
    assert refused.value.code == "FAILED_PRECONDITION"


def test_a_running_job_is_cancelled(client):
    job = client.submit(world_size=2, name="long", **dict(SWEEP, limit_images=8192, batch_size=32))
    watch = job.watch(timeout=60)
    first = next(e for e in watch if isinstance(e, gantry.Progress))
    watch.close()
    assert first.step >= 1
    assert job.cancel() in (gantry.JobState.CANCELLING, gantry.JobState.CANCELLED)
    assert job.wait(timeout=30) is gantry.JobState.CANCELLED
    assert job.report() == [], "stopped inside its first epoch"


def test_a_queued_job_is_cancelled_at_once(client, tmp_path):
    run_file = tmp_path / "run.yaml"
    run_file.write_text("model: dcgan\ndataset: fashion-mnist\ndata-dir: {}\nbatch-size: [32, 64]\nepochs: 3\n"
                        .format(FASHION_MNIST))
    # No 3-rank group exists, so it stays queued; the keyword overrides the file.
    job = client.submit(run_file=str(run_file), world_size=3, epochs=2)
    spec = job.info.spec
    assert (list(spec.batch_sizes), spec.epochs.value, spec.data_dir) == ([32, 64], 2, FASHION_MNIST)
    assert job.state is gantry.JobState.QUEUED
    assert job.cancel() is gantry.JobState.CANCELLED


def test_a_setting_the_coordinator_refuses_is_invalid_spec_with_its_message(client):
    with pytest.raises(gantry.InvalidSpec) as refused:
        client.submit(**dict(SWEEP, optimizer="adamw"))
    assert refused.value.code == "INVALID_ARGUMENT"
    assert "--optimizer: bad value 'adamw'" in str(refused.value)
    with pytest.raises(gantry.InvalidSpec) as refused:
        client.submit(**dict(SWEEP, data_dir="/tmp"))
    assert "spec.data_dir: '/tmp'" in str(refused.value) and "outside the data roots" in str(refused.value)


def test_an_unknown_keyword_is_refused_before_sending(client):
    count = len(client.jobs())
    with pytest.raises(gantry.InvalidSpec, match=r"unknown setting 'epoch'; did you mean 'epochs'\?"):
        client.submit(**dict(SWEEP, epoch=3))
    assert len(client.jobs()) == count


def test_a_wrong_or_missing_token_is_unauthenticated(cluster, no_gantry_environment):
    with pytest.raises(gantry.Unauthenticated) as refused:
        gantry.Client(cluster.address, token="not-the-token").jobs()
    assert refused.value.code == "UNAUTHENTICATED" and "token" in str(refused.value)
    with pytest.raises(gantry.Unauthenticated):
        gantry.Client(cluster.address).submit(**SWEEP)


def test_the_environment_names_the_coordinator_and_the_token(cluster, sweep, monkeypatch):
    monkeypatch.setenv("GANTRY_COORDINATOR", cluster.address)
    monkeypatch.setenv("GANTRY_TOKEN", TOKEN)
    assert sweep[0].id in [j.id for j in gantry.Client().jobs()]


def test_an_unknown_job_is_not_found(client):
    with pytest.raises(gantry.NotFound) as refused:
        client.job("job-999999")
    assert isinstance(refused.value, LookupError) and "job-999999" in str(refused.value)


def test_rollouts_are_refused_naming_what_is_wrong_with_the_source(cluster, client, sweep):
    job, _ = sweep
    with pytest.raises(gantry.InvalidSpec) as refused:
        job.rollout(cluster.case_dir, steps=4)
    assert "rollout.source_job_id: {} trained --model dcgan on --dataset fashion-mnist".format(job.id) \
        in str(refused.value)
    with pytest.raises(gantry.NotFound, match="rollout.source_job_id: no job 'job-999999'"):
        client.rollout("job-999999", cluster.case_dir, steps=4)
    queued = client.submit(world_size=3, **SWEEP)  # no 3-rank group: it stays queued
    with pytest.raises(gantry.Conflict) as refused:
        queued.rollout(cluster.case_dir, steps=4, tile=32, blend="linear")
    assert refused.value.code == "FAILED_PRECONDITION" and queued.id in str(refused.value)
    queued.cancel()
    with pytest.raises(gantry.InvalidSpec, match=r"rollout: steps: bad value '4' \(an integer\)"):
        job.rollout(cluster.case_dir, steps="4")


def test_a_rollout_of_a_finished_flow_run_runs_into_its_run_folder(cluster, client):
    train = client.submit(model="pix2pix", dataset="flow", data_dir=cluster.flow_dir, image_size=32, ngf=8, ndf=8,
                          batch_size=8, epochs=1, max_steps=3, world_size=2, name="tiny flow run")
    assert train.wait(timeout=60) is gantry.JobState.SUCCEEDED, train.error
    rollout = train.rollout(cluster.case_dir, steps=6, overlap=8)
    assert rollout.name == "rollout of {}: case-1".format(train.id)
    assert rollout.info.rollout.source_job_id == train.id
    events = list(rollout.watch(timeout=60))
    assert events[-1].state is gantry.JobState.SUCCEEDED, rollout.error
    assert all(e.rollout and e.eta_seconds is None for e in events if isinstance(e, gantry.Progress))
    assert rollout.report() == [], "a rollout reports no epochs"
    rollout_csv = cluster.pool.run_file(train.id, os.path.join("rollout-case-1-" + rollout.id, "rollout.csv"))
    assert rollout_csv.count("\n") == 7, "a header and one line per model step"
    # --report-every: the rows of steps 4 and 6 (the last); the pool takes the field.
    sparse = train.rollout(cluster.case_dir, steps=6, overlap=8, report_every=4)
    assert sparse.wait(timeout=60) is gantry.JobState.SUCCEEDED, sparse.error
    sparse_csv = cluster.pool.run_file(train.id, os.path.join("rollout-case-1-" + sparse.id, "rollout.csv"))
    assert [line.split(",")[0] for line in sparse_csv.splitlines()[1:]] == ["4", "6"]


def test_generate_draws_samples_into_a_folder_of_its_own_in_the_run_folder(cluster, client, sweep):
    job, _ = sweep
    first = job.generate(count=6, seed=3, batch=4)
    second = job.generate(count=2, name="two")
    assert first.info.generate.source_job_id == job.id
    for generate in (first, second):
        events = list(generate.watch(timeout=60))
        assert events[-1].state is gantry.JobState.SUCCEEDED, generate.error
        assert generate.report() == [], "a generate reports no epochs"
    info = json.loads(cluster.pool.run_file(job.id, os.path.join("generate-" + first.id, "generate.json")))
    assert (info["count"], info["seed"], info["batch"], info["ranks"]) == (6, 3, 4, 2)
    assert json.loads(cluster.pool.run_file(job.id, os.path.join("generate-two", "generate.json")))["count"] == 2
    # The same name again: the folder holds the first one's files, so the job fails, and
    # they stay as they were.
    again = job.generate(count=3, name="two")
    assert again.wait(timeout=60) is gantry.JobState.FAILED
    assert "not an empty folder" in again.error
    assert json.loads(cluster.pool.run_file(job.id, os.path.join("generate-two", "generate.json")))["count"] == 2


def test_generates_are_refused_naming_the_field(cluster, client, sweep):
    job, _ = sweep
    with pytest.raises(gantry.InvalidSpec, match=r"generate.count: bad value '0' \(an integer in \[1, 100000\]\)"):
        job.generate(count=0)
    with pytest.raises(gantry.InvalidSpec, match="generate.case_dir: .* leave case_dir unset"):
        job.generate(count=2, case_dir=cluster.case_dir)
    with pytest.raises(gantry.InvalidSpec, match="generate.name: 'a/b': use letters"):
        job.generate(count=2, name="a/b")
    with pytest.raises(gantry.NotFound, match="generate.source_job_id: no job 'job-999999'"):
        client.generate("job-999999", 2)
    with pytest.raises(gantry.InvalidSpec, match=r"generate: count: bad value '2' \(an integer\)"):
        job.generate(count="2")


def test_a_watch_times_out_on_a_job_that_does_not_end(client):
    job = client.submit(world_size=3, **SWEEP)  # no 3-rank group: it stays queued
    started = time.monotonic()
    with pytest.raises(gantry.Timeout, match="has not ended"):
        job.wait(timeout=1.5)
    assert 1.0 < time.monotonic() - started < 10
    assert job.cancel() is gantry.JobState.CANCELLED
