"""Run files for submit(run_file=...): what `gantry submit --config` and `gantry-worker
--config` read (runspec/run_file.cc), with the same rules.

A run file is a flat YAML or JSON mapping of "setting: value" pairs; keys are the
settings' names, kebab-case or snake_case alike (data-dir, data_dir); a value is a
scalar or a list of scalars (batch-size: [64, 512], or "64,512"). Scalars are read as
the strings they are written as (YAML's BaseLoader, as yaml-cpp does), then converted by
the setting's type exactly as the CLI converts its flags. Refused, naming the file: a
file that is missing, not a regular file or over 1 MiB; not YAML/JSON; not a mapping;
an unknown setting (with the closest name), a setting given twice (data_dir and
data-dir count as one), a value that is empty, a mapping or a nested list.

YAML needs PyYAML (Debian: python3-yaml); a .json file is read without it.
"""
import functools
import json
import os

from gantry.errors import InvalidSpec
from gantry.settings import field_of_keyword, keyword_of_setting, unknown_setting

MAX_RUN_FILE_BYTES = 1 << 20  # a run file holds a few dozen settings (runspec/run_file.h)


def read_run_file(path):
    """{keyword: value as written (a string, or a list of strings)} from the run file."""
    path = os.fspath(path)
    where = path + ": "
    if not os.path.exists(path):
        raise InvalidSpec(where + "cannot open run file (check the path)")
    if not os.path.isfile(path):
        raise InvalidSpec(where + "not a regular file (a run file is a small YAML or JSON file of "
                          "setting: value pairs)")
    if os.path.getsize(path) > MAX_RUN_FILE_BYTES:
        raise InvalidSpec(where + "larger than {} bytes (a run file is a small YAML or JSON file of "
                          "setting: value pairs)".format(MAX_RUN_FILE_BYTES))
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    pairs = _parse(text, path, where)
    return _settings_of(pairs, where)


def _parse(text, path, where):
    """The mapping's (key, value) pairs in file order; values are strings, lists, _Pairs
    (a nested mapping) or None, as written."""
    if path.endswith(".json"):
        try:
            root = json.loads(text, object_pairs_hook=_Pairs)
        except ValueError as e:
            raise InvalidSpec(where + "not valid JSON: " + str(e)) from None
        return _pairs_of(root, where, json_scalars=True)
    try:
        import yaml
    except ImportError:
        raise InvalidSpec(where + "reading a YAML run file needs PyYAML: apt-get install python3-yaml "
                          "(or write the run file as .json)") from None
    try:
        root = yaml.load(text, Loader=_pairs_loader(yaml))
    except RecursionError:
        raise InvalidSpec(where + "nested too deeply for the YAML parser; a run file is a flat mapping "
                          "of setting: value pairs") from None
    except yaml.YAMLError as e:
        raise InvalidSpec(where + "not valid YAML/JSON: " + str(e)) from None
    return _pairs_of(root, where, json_scalars=False)


class _Pairs(list):
    """A mapping kept as its (key, value) pairs, so a key given twice can be told."""


@functools.lru_cache(maxsize=None)
def _pairs_loader(yaml):
    """YAML's BaseLoader (every scalar a string, as yaml-cpp hands them over) with
    mappings kept as _Pairs."""

    class PairsLoader(yaml.BaseLoader):
        def construct_pairs(self, node):
            return _Pairs((self.construct_object(k, deep=True), self.construct_object(v, deep=True))
                          for k, v in node.value)

    PairsLoader.add_constructor("tag:yaml.org,2002:map", PairsLoader.construct_pairs)
    return PairsLoader


def _pairs_of(root, where, json_scalars):
    if not isinstance(root, _Pairs):
        raise InvalidSpec(where + "expected a mapping of setting: value pairs")
    return [(key, value if not json_scalars else _json_text(value)) for key, value in root]


def _json_text(value):
    """JSON scalars as the strings yaml-cpp would hand over ("64", "true", "1e-4")."""
    if isinstance(value, _Pairs):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, list):
        return [_json_text(v) for v in value]
    return value


def _settings_of(pairs, where):
    settings = {}
    for key, value in pairs:
        if not isinstance(key, str):
            raise InvalidSpec(where + "every key must be a setting name")
        keyword = keyword_of_setting(key)
        if field_of_keyword(keyword) is None:
            raise unknown_setting(key, where)
        if keyword in settings:
            raise InvalidSpec("{}setting '{}' is given twice; keep one".format(where, key.replace("_", "-")))
        settings[keyword] = _scalar_or_list(key, value, where)
    return settings


def _scalar_or_list(key, value, where):
    if value is None or value == "":
        raise InvalidSpec("{}setting '{}' has no value".format(where, key))
    if isinstance(value, str):
        return value
    if isinstance(value, _Pairs) or not isinstance(value, list):
        raise InvalidSpec("{}setting '{}' must be a value or a list of values, not a mapping".format(where, key))
    if not value:
        raise InvalidSpec("{}setting '{}' is an empty list; give a value".format(where, key))
    for item in value:
        if isinstance(item, _Pairs) or not isinstance(item, str):
            raise InvalidSpec("{}setting '{}' must be a list of plain values (no nested lists or maps)".format(
                where, key))
        if not item:
            raise InvalidSpec("{}setting '{}' has an empty list entry".format(where, key))
    return ",".join(value)
