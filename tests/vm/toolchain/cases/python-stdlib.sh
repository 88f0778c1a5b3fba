# python3: tempfile, sqlite3, ctypes (a C callback).  $1: the workspace.
cd "$1"
cat >std.py <<'PY'
import ctypes, ctypes.util, os, sqlite3, tempfile

# tempfile: the run's TMPDIR
with tempfile.NamedTemporaryFile("w+") as f:
    f.write("hello")
    f.flush()
    f.seek(0)
    assert f.read() == "hello"
with tempfile.TemporaryDirectory() as d:
    open(os.path.join(d, "x"), "w").write("y")
fd, name = tempfile.mkstemp(suffix=".tmp")
os.close(fd)
os.unlink(name)

# sqlite3: a database file in the workspace, a WAL journal, a temp table
db = sqlite3.connect("app.db")
db.execute("PRAGMA journal_mode=WAL")
db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)")
with db:
    db.executemany("INSERT INTO t (v) VALUES (?)", [("v%d" % i,) for i in range(1000)])
db.execute("CREATE TEMP TABLE s AS SELECT v FROM t ORDER BY v DESC")
assert db.execute("SELECT COUNT(*) FROM s").fetchone()[0] == 1000
db.close()

# ctypes: libc's strlen, and qsort calling back into Python
libc = ctypes.CDLL(ctypes.util.find_library("c"))
assert libc.strlen(b"tether") == 6
arr = (ctypes.c_int * 5)(5, 1, 4, 2, 3)
CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
libc.qsort(arr, 5, ctypes.sizeof(ctypes.c_int), CMP(lambda a, b: a[0] - b[0]))
assert list(arr) == [1, 2, 3, 4, 5]
print("stdlib ok")
PY
python3 std.py
