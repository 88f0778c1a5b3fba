# python3: pytest on a small project (tmp_path, monkeypatch, capsys).
# $1: the workspace.
cd "$1"
mkdir -p proj/tests
cd proj
cat >calc.py <<'PY'
import os

def add(a, b):
    return a + b

def save(path, value):
    with open(path, "w") as f:
        f.write(str(value))
    return os.path.getsize(path)
PY
cat >tests/test_calc.py <<'PY'
import calc

def test_add():
    assert calc.add(2, 3) == 5

def test_save(tmp_path):
    assert calc.save(tmp_path / "v.txt", 1234) == 4
    assert (tmp_path / "v.txt").read_text() == "1234"

def test_env(monkeypatch, capsys):
    monkeypatch.setenv("TC_VALUE", "x")
    import os
    print(os.environ["TC_VALUE"])
    assert capsys.readouterr().out == "x\n"
PY
printf '[pytest]\npythonpath = .\n' >pytest.ini
python3 -m pytest -q >../pytest.out 2>&1 || { cat ../pytest.out; exit 1; }
grep -q '3 passed' ../pytest.out
