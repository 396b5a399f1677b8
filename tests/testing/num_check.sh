# Sourced by the end-to-end test scripts: numeric checks that cannot be fooled by NaN.
#
#   num_check 'EXPRESSION' NAME=VALUE...
#
# succeeds when every VALUE is a finite number and the Python EXPRESSION over the NAMEs
# holds, e.g. num_check 'm > 0 and m < 0.5 * p' m="$model" p="$persistence". Fails
# (status 1, saying why on stderr) for an empty or non-numeric value, NaN, -NaN or an
# infinity, whatever the expression: awk (Debian's default mawk) lets nan through
# comparisons such as `v > 0`, which is why these checks do not use it. It runs Debian's
# own /usr/bin/python3 (a python3 first on PATH may be a slow pyenv shim).
num_check() {
  /usr/bin/python3 -S -E - "$@" <<'PY'
import math, sys
expression, pairs = sys.argv[1], sys.argv[2:]
values = {}
for pair in pairs:
    name, _, text = pair.partition('=')
    try:
        value = float(text)
    except ValueError:
        sys.exit(f'num_check: {name} is {text!r}, not a number')
    if not math.isfinite(value):
        sys.exit(f'num_check: {name} is {text}, not finite')
    values[name] = value
if not eval(expression, {'__builtins__': {}, 'abs': abs, 'min': min, 'max': max}, values):
    sys.exit(f'num_check: {expression} is false for ' + ', '.join(f'{k}={v!r}' for k, v in values.items()))
PY
}
