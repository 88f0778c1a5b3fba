# python3: a venv (the system's pip, no download) and pip install of a local
# wheel and a local sdist with --no-index.  $1: the workspace, $2: the
# directory with the wheel and the sdist.
cd "$1"
python3 -m venv --without-pip --system-site-packages venv
venv/bin/python -m pip install -q --no-index --no-build-isolation \
	"$2"/tinywheel-1.0-py3-none-any.whl "$2"/tinysdist-1.0.tar.gz
venv/bin/python - <<'PY'
import sys, tinywheel, tinysdist
assert sys.prefix != sys.base_prefix, "not in the venv"
for m in (tinywheel, tinysdist):
    assert m.__file__.startswith(sys.prefix), m.__file__
assert tinysdist.add(2, 3) == 5
print(tinywheel.greet("tether"))
PY
venv/bin/python -m pip list 2>/dev/null >pip-list.txt
