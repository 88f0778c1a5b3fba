# python3: multiprocessing Pool and Queue, concurrent.futures'
# ProcessPoolExecutor (POSIX semaphores in /dev/shm).  $1: the workspace.
cd "$1"
cat >mp.py <<'PY'
import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor

def square(x):
    return x * x

def produce(q, n):
    for i in range(n):
        q.put(i)
    q.put(None)

if __name__ == "__main__":
    with mp.Pool(2) as pool:
        assert pool.map(square, range(10)) == [i * i for i in range(10)]
    q = mp.Queue()
    p = mp.Process(target=produce, args=(q, 100))
    p.start()
    got = []
    while (v := q.get(timeout=60)) is not None:
        got.append(v)
    p.join()
    assert got == list(range(100)) and p.exitcode == 0
    with ProcessPoolExecutor(max_workers=2) as ex:
        assert list(ex.map(square, range(5))) == [0, 1, 4, 9, 16]
    lock = mp.Lock()
    with lock:
        pass
    print("multiprocessing ok")
PY
python3 mp.py
