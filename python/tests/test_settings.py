"""Settings by keyword and run files, checked before anything is sent (no coordinator)."""
import json
import os

import pytest

import gantry
from gantry.run_file import MAX_RUN_FILE_BYTES, read_run_file
from gantry.settings import build_run_spec


def test_every_run_spec_field_is_a_keyword_named_as_the_worker_setting():
    names = gantry.setting_names()
    assert names[:5] == ["model", "dataset", "data_dir", "epochs", "batch_size"]
    assert "batch_sizes" not in names and "max_steps" in names and "quality" in names
    assert len(names) == len(gantry.v1.run_spec_pb2.RunSpec.DESCRIPTOR.fields)


def test_values_take_the_fields_types_or_the_strings_the_cli_reads():
    spec = build_run_spec({"model": "dcgan", "batch_size": [64, 512], "epochs": 3, "lr": "1e-4", "beta1": 0,
                           "sync_bn": "yes", "seed": 0, "loss_scale": 1024, "max_steps": "7"})
    assert list(spec.batch_sizes) == [64, 512]
    assert spec.epochs.value == 3 and spec.max_steps.value == 7
    assert spec.lr.value == pytest.approx(1e-4)
    assert spec.HasField("beta1") and spec.beta1.value == 0, "a zero is set, not left to the default"
    assert spec.HasField("seed") and spec.sync_bn.value is True
    assert spec.loss_scale == "1024"
    assert not spec.HasField("beta2"), "unset stays unset: the worker's default"
    assert list(build_run_spec({"batch_size": "32, 64"}).batch_sizes) == [32, 64]
    assert list(build_run_spec({"batch_size": 128}).batch_sizes) == [128]


def test_data_dir_is_made_absolute_against_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert build_run_spec({"data_dir": "data/../fashion"}).data_dir == str(tmp_path / "fashion")


@pytest.mark.parametrize("values, expected", [
    ({"epochs": "3.5"}, "epochs: bad value '3.5' (an integer)"),
    ({"epochs": True}, "epochs: bad value True (an integer)"),
    ({"epochs": 2.0}, "epochs: bad value 2.0 (an integer)"),
    ({"seed": -1}, "seed: bad value -1 (an integer in [0, 18446744073709551615])"),
    ({"lr": "1_0"}, "lr: bad value '1_0' (a number)"),
    ({"lr": None}, "lr: bad value None (a number)"),
    ({"sync_bn": 1}, "sync_bn: bad value 1 (True or False)"),
    ({"sync_bn": "maybe"}, "sync_bn: bad value 'maybe' (True or False)"),
    ({"model": True}, "model: bad value True (a string)"),
    ({"batch_size": [64, "x"]}, "batch_size: bad value [64, 'x'] (an integer or a list of integers"),
    ({"batch_size": []}, "batch_size: bad value []"),
])
def test_a_value_of_the_wrong_type_is_refused_naming_the_setting(values, expected):
    with pytest.raises(gantry.InvalidSpec) as refused:
        build_run_spec(values)
    assert expected in str(refused.value)
    assert isinstance(refused.value, ValueError) and refused.value.code is None


def test_an_unknown_keyword_names_the_closest_setting():
    with pytest.raises(gantry.InvalidSpec, match=r"unknown setting 'batchsize'; did you mean 'batch_size'\?"):
        build_run_spec({"batchsize": 64})
    with pytest.raises(gantry.InvalidSpec, match=r"unknown setting 'batch_sizes'; did you mean 'batch_size'\?"):
        build_run_spec({"batch_sizes": [64]})
    with pytest.raises(gantry.InvalidSpec, match=r"unknown setting 'max_step'; did you mean 'max_steps'\?"):
        build_run_spec({"max_step": 3})
    with pytest.raises(gantry.InvalidSpec, match=r"unknown setting 'zzz' \(the settings: model, dataset, data_dir"):
        build_run_spec({"zzz": 1})


def write(folder, name, text):
    path = os.path.join(str(folder), name)
    with open(path, "w") as f:
        f.write(text)
    return path


def test_a_yaml_run_file_reads_as_the_cli_reads_it(tmp_path):
    path = write(tmp_path, "run.yaml", "model: dcgan\ndata-dir: /data/fashion\nbatch_size: [64, 512]\n"
                                       "lr: 1e-4\nsync-bn: true\nepochs: 3\n")
    settings = read_run_file(path)
    assert settings == {"model": "dcgan", "data_dir": "/data/fashion", "batch_size": "64,512", "lr": "1e-4",
                        "sync_bn": "true", "epochs": "3"}
    spec = build_run_spec(settings, path + ": ")
    assert list(spec.batch_sizes) == [64, 512] and spec.lr.value == pytest.approx(1e-4)
    assert spec.sync_bn.value is True and spec.epochs.value == 3


def test_a_json_run_file_reads_like_the_same_yaml(tmp_path):
    path = write(tmp_path, "run.json", json.dumps({"model": "dcgan", "batch-size": [64, 512], "lr": 0.0001,
                                                    "sync_bn": False, "epochs": 3}))
    assert read_run_file(path) == {"model": "dcgan", "batch_size": "64,512", "lr": "0.0001", "sync_bn": "false",
                                   "epochs": "3"}


@pytest.mark.parametrize("name, text, expected", [
    ("twice.yaml", "data_dir: /a\ndata-dir: /b\n", "setting 'data-dir' is given twice; keep one"),
    ("unknown.yaml", "batch-sise: 64\n", "unknown setting 'batch-sise'; did you mean 'batch_size'?"),
    ("empty.yaml", "epochs:\n", "setting 'epochs' has no value"),
    ("nested.yaml", "epochs: {a: 1}\n", "setting 'epochs' must be a value or a list of values, not a mapping"),
    ("nested_list.yaml", "batch-size: [[64]]\n", "must be a list of plain values (no nested lists or maps)"),
    ("empty_list.yaml", "batch-size: []\n", "setting 'batch-size' is an empty list; give a value"),
    ("empty_entry.yaml", "batch-size: [64, '']\n", "setting 'batch-size' has an empty list entry"),
    ("list.yaml", "- epochs\n", "expected a mapping of setting: value pairs"),
    ("broken.yaml", "epochs: [1\n", "not valid YAML/JSON"),
    ("twice.json", '{"epochs": 1, "epochs": 2}', "setting 'epochs' is given twice; keep one"),
    ("broken.json", '{"epochs": ', "not valid JSON"),
])
def test_a_bad_run_file_is_refused_naming_the_file_and_the_fix(tmp_path, name, text, expected):
    path = write(tmp_path, name, text)
    with pytest.raises(gantry.InvalidSpec) as refused:
        read_run_file(path)
    assert str(refused.value).startswith(path + ": ")
    assert expected in str(refused.value)


def test_a_run_file_that_is_not_a_small_regular_file_is_refused(tmp_path):
    with pytest.raises(gantry.InvalidSpec, match="cannot open run file"):
        read_run_file(str(tmp_path / "missing.yaml"))
    with pytest.raises(gantry.InvalidSpec, match="not a regular file"):
        read_run_file(str(tmp_path))
    big = write(tmp_path, "big.yaml", "#" * (MAX_RUN_FILE_BYTES + 1))
    with pytest.raises(gantry.InvalidSpec, match="larger than 1048576 bytes"):
        read_run_file(big)


def test_keywords_override_the_run_file(tmp_path):
    path = write(tmp_path, "run.yaml", "epochs: 3\nbatch-size: 64,512\n")
    spec = build_run_spec({"epochs": 1}, "", build_run_spec(read_run_file(path), path + ": "))
    assert spec.epochs.value == 1 and list(spec.batch_sizes) == [64, 512]


def test_a_value_in_a_run_file_is_refused_naming_the_file(tmp_path):
    path = write(tmp_path, "run.yaml", "epochs: three\n")
    with pytest.raises(gantry.InvalidSpec, match=r"run.yaml: epochs: bad value 'three' \(an integer\)"):
        build_run_spec(read_run_file(path), path + ": ")


def test_your_own_images_take_the_same_keywords_as_the_worker(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = build_run_spec({"dataset": "images", "data_dir": "emoji64.pack", "image_size": 64, "channels": 3,
                           "mirror": True, "augment": "color,translation,cutout"})
    assert spec.dataset == "images" and spec.data_dir == str(tmp_path / "emoji64.pack")
    assert spec.image_size.value == 64 and spec.channels.value == 3 and spec.mirror.value is True
    assert spec.augment == "color,translation,cutout"
    with pytest.raises(gantry.InvalidSpec, match=r"channels: bad value 'three' \(an integer"):
        build_run_spec({"dataset": "images", "channels": "three"})


def test_unrolled_flow_training_takes_the_workers_keywords():
    spec = build_run_spec({"model": "pix2pix", "dataset": "flow", "unroll": 8, "unroll_loss": "last",
                           "pushforward": "true", "unroll_curriculum": "2"})
    assert spec.unroll.value == 8 and spec.unroll_loss == "last"
    assert spec.pushforward.value is True and spec.unroll_curriculum.value == 2
    with pytest.raises(gantry.InvalidSpec, match=r"unroll: bad value 'eight' \(an integer"):
        build_run_spec({"unroll": "eight"})
