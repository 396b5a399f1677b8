"""A watch that outlives its coordinator: gantry-coordinator is killed (SIGKILL) while a
job is being watched and started again on the same port and database; the watch goes
on and ends with the final state, nothing yielded twice or skipped. A coordinator that
stays away ends the watch with Unavailable after the reconnect bound."""
import os
import signal
import threading
import time

import gantry
from processes import FASHION_MNIST, Coordinator, Pool, wait_until


def test_a_watch_survives_a_coordinator_restart(tmp_path):
    folder = str(tmp_path)
    db = os.path.join(folder, "gantry.db")
    coordinators = [Coordinator(folder, db)]
    port = coordinators[0].port
    pool = Pool(folder, coordinators[0].address, ["--max-jobs", "1", "--report-seconds", "0.3", "--max-backoff",
                                                  "0.5"])
    restarted = threading.Event()

    def restart():
        coordinators.append(Coordinator(folder, db, port=port, start_number=2))
        restarted.set()

    try:
        client = gantry.Client(coordinators[0].address, timeout=10)
        job = client.submit(model="dcgan", dataset="fashion-mnist", data_dir=FASHION_MNIST, limit_images=512,
                            batch_size=[32, 64], epochs=1, quality="off", world_size=2)
        events, killed_at = [], None
        for event in job.watch(timeout=90, reconnect=30):
            events.append(event)
            if killed_at is None and isinstance(event, gantry.Progress):
                coordinators[0].process.signal(signal.SIGKILL)
                coordinators[0].process.wait(10)
                killed_at = time.monotonic()
                # Up again in 1.5 s, while this watch keeps asking.
                threading.Timer(1.5, restart).start()
        assert killed_at is not None, "no progress before the end: nothing was tested"
        assert restarted.wait(10), "the coordinator was started again"
        assert isinstance(events[-1], gantry.StateChanged), events[-3:]
        assert events[-1].state is gantry.JobState.SUCCEEDED, pool.process.log()
        stored = [e.sequence for e in events if not isinstance(e, gantry.Progress)]
        assert stored == sorted(set(stored)), "each stored entry once, in order"
        epochs = [(e.batch_size, e.epoch) for e in events if isinstance(e, gantry.EpochEnded)]
        assert epochs == [(32, 1), (64, 1)]
        assert job.info.attempts == 1, "the job never left its group"
        assert pool.process.wait(30) == 0, pool.process.log()
        assert job.report_csv() == pool.run_file(job.id, "epochs.csv")

        # Gone for good: the watch gives up after its reconnect bound, as Unavailable.
        coordinators[-1].process.signal(signal.SIGKILL)
        coordinators[-1].process.wait(10)
        started = time.monotonic()
        try:
            job.wait(timeout=60, reconnect=2)
            raise AssertionError("a watch without a coordinator ended")
        except gantry.Unavailable as e:
            assert "cannot reach the coordinator at 127.0.0.1:{}".format(port) in str(e)
        assert 2 <= time.monotonic() - started < 10
    finally:
        pool.process.stop()
        wait_until(restarted.is_set, 5)
        for c in coordinators:
            c.process.stop()
