"""The state names the client gives: the same contract as `gantry`'s (report/state_names.cc),
spelled out here once more on purpose, so a renamed state fails this test."""
from gantry.states import JobState, group_state_name
from gantry.v1 import job_pb2


def test_group_states_have_the_names_gantry_prints():
    assert [group_state_name(v) for v in (job_pb2.GROUP_STATE_IDLE, job_pb2.GROUP_STATE_BUSY,
                                          job_pb2.GROUP_STATE_LOST)] == ["idle", "busy", "lost"]


def test_every_group_state_of_the_enum_is_named_and_unknown_ones_are_unspecified():
    for value in job_pb2.GroupState.values():
        if value != job_pb2.GROUP_STATE_UNSPECIFIED:
            assert group_state_name(value) not in ("", "unspecified"), value
    assert group_state_name(job_pb2.GROUP_STATE_UNSPECIFIED) == "unspecified"
    assert group_state_name(99) == "unspecified"


def test_job_states_have_the_names_gantry_prints():
    named = [str(s) for s in JobState if s is not JobState.UNSPECIFIED]
    assert named == ["queued", "running", "cancelling", "succeeded", "failed", "cancelled"]
    assert {s.value for s in JobState} == set(job_pb2.JobState.values())
