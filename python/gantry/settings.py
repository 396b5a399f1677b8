"""Training settings as submit() takes them, into a gantry.v1.RunSpec.

The names come from the RunSpec message itself, as runspec/run_spec_settings.cc maps them
for the CLI: one field per `gantry-worker train` setting, named after it with '-'
written '_'; `batch_sizes` is the setting batch-size. Here a setting is named by its
keyword, the setting's name with '_' for '-' (data_dir, batch_size, max_steps), so a
field added to run_spec.proto is a keyword at the next build with no code here.

Values are typed as the fields are (int, float, bool, str; batch_size one int or a list
of them) and may also be given as the strings the CLI and run files use ("64,512",
"1e-4", "true"), read as the C++ reads them. Ranges and choices are the coordinator's to
check (it runs the worker's own validator); an unknown keyword or a value of the wrong
type is refused here, naming the closest setting.
"""
import difflib
import os
import re

from gantry._stubs import run_spec_pb2
from gantry.errors import InvalidSpec

_BATCH_FIELD = "batch_sizes"
_BATCH_KEYWORD = "batch_size"
_INT_TYPES = ("google.protobuf.Int64Value", "google.protobuf.Int32Value", "google.protobuf.UInt64Value",
              "google.protobuf.UInt32Value")
_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*")
_SWITCH_WORDS = {"true": True, "1": True, "yes": True, "on": True,
                 "false": False, "0": False, "no": False, "off": False}


def field_of_keyword(keyword):
    """The RunSpec field a keyword sets, or None."""
    field = _BATCH_FIELD if keyword == _BATCH_KEYWORD else keyword
    if field == _BATCH_FIELD and keyword != _BATCH_KEYWORD:
        return None
    return field if field in run_spec_pb2.RunSpec.DESCRIPTOR.fields_by_name else None


def keywords():
    """Every setting submit() takes, in RunSpec field order."""
    return [_BATCH_KEYWORD if f.name == _BATCH_FIELD else f.name for f in run_spec_pb2.RunSpec.DESCRIPTOR.fields]


def keyword_of_setting(name):
    """A setting as a run file or the CLI writes it (data-dir, data_dir) as a keyword."""
    return name.replace("-", "_")


def unknown_setting(name, where=""):
    """The InvalidSpec for a setting RunSpec does not have, naming the closest one."""
    known = keywords()
    close = difflib.get_close_matches(keyword_of_setting(name), known, n=1, cutoff=0.6)
    if close:
        return InvalidSpec("{}unknown setting '{}'; did you mean '{}'? (gantry.setting_names() lists them "
                           "all)".format(where, name, close[0]))
    return InvalidSpec("{}unknown setting '{}' (the settings: {})".format(where, name, ", ".join(known)))


def build_run_spec(values, where="", spec=None):
    """A RunSpec from {keyword: value}, or `spec` with those settings set over it (a
    run file's, then the keywords'). `where` prefixes messages (a run file's path).
    data_dir is made absolute against the current folder, as `gantry submit` does: the
    coordinator and the workers may run elsewhere."""
    spec = run_spec_pb2.RunSpec() if spec is None else spec
    for keyword, value in values.items():
        field = field_of_keyword(keyword)
        if field is None:
            raise unknown_setting(keyword, where)
        if field == "data_dir" and isinstance(value, (str, os.PathLike)):
            value = os.path.normpath(os.path.abspath(os.fspath(value)))
        _set_field(spec, field, keyword, value, where)
    return spec


def _set_field(spec, field, keyword, value, where):
    descriptor = run_spec_pb2.RunSpec.DESCRIPTOR.fields_by_name[field]
    if field == _BATCH_FIELD:
        spec.batch_sizes[:] = _batch_sizes(keyword, value, where)
    elif descriptor.message_type is None:
        setattr(spec, field, _text(keyword, value, where))
    else:
        getattr(spec, field).value = _wrapped(descriptor.message_type.full_name, keyword, value, where)


def _bad(keyword, value, expected, where):
    return InvalidSpec("{}{}: bad value {!r} ({})".format(where, keyword, value, expected))


def _integer(keyword, value, where, expected="an integer"):
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise _bad(keyword, value, expected, where)
    if isinstance(value, str):
        if not _INTEGER.fullmatch(value):
            raise _bad(keyword, value, expected, where)
        value = int(value)
    return value


def _number(keyword, value, where):
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _bad(keyword, value, "a number", where)
    if isinstance(value, str):
        try:
            if "_" in value:  # Python reads "1_000"; the C++ does not
                raise ValueError(value)
            return float(value)
        except ValueError:
            raise _bad(keyword, value, "a number", where) from None
    return float(value)


def _switch(keyword, value, where):
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in _SWITCH_WORDS:
        return _SWITCH_WORDS[value]
    raise _bad(keyword, value, "True or False", where)


def _text(keyword, value, where):
    """A string setting; a number is taken as written (loss_scale=1024)."""
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return repr(value)
    raise _bad(keyword, value, "a string", where)


def _wrapped(type_name, keyword, value, where):
    if type_name in _INT_TYPES:
        unsigned = type_name.startswith("google.protobuf.UInt")
        number = _integer(keyword, value, where, "a non-negative integer" if unsigned else "an integer")
        bits = 32 if "Int32" in type_name else 64
        low, high = (0, 2 ** bits - 1) if unsigned else (-2 ** (bits - 1), 2 ** (bits - 1) - 1)
        if not low <= number <= high:
            raise _bad(keyword, value, "an integer in [{}, {}]".format(low, high), where)
        return number
    if type_name == "google.protobuf.DoubleValue":
        return _number(keyword, value, where)
    if type_name == "google.protobuf.BoolValue":
        return _switch(keyword, value, where)
    raise InvalidSpec("{}{}: RunSpec field of type {} is not supported by this client".format(
        where, keyword, type_name))


def _batch_sizes(keyword, value, where):
    """One batch size, a list of them, or the CLI's comma-separated string ("64,512")."""
    expected = "an integer or a list of integers, e.g. 64 or [64, 128, 256, 512]"
    if isinstance(value, str):
        parts = [p for p in value.split(",") if p.strip()]
    elif isinstance(value, (list, tuple)):
        parts = list(value)
    else:
        parts = [value]
    if not parts:
        raise _bad(keyword, value, expected, where)
    sizes = []
    for part in parts:
        try:
            sizes.append(_integer(keyword, part, where))
        except InvalidSpec:
            raise _bad(keyword, value, expected, where) from None
    return sizes
