"""Eager operations called from several threads of one process at once (they share the traced
operations): each thread's results equal numpy's with GraphBLAS semantics (a reduction without
entries is missing, not zero)."""
import subprocess
import sys
import textwrap
import threading

import numpy as np
import scipy.sparse as sp

import dspla as dp
from dspla.eager import dispatch

N, THREADS, CALLS = 300, 4, 150


def _inputs():
    """One int64 matrix per thread, all of one signature (one traced operation); even threads'
    have no entries."""
    out = []
    for k in range(THREADS):
        rng = np.random.default_rng(k)
        dense = rng.integers(1, 5, (N, N)) * (k + 1)
        present = rng.random((N, N)) < (0.05 if k % 2 else 0.0)
        r, c = np.nonzero(present)
        out.append((sp.csr_array((dense[r, c], (r, c)), shape=(N, N)), dense, present))
    return out


def test_reductions_in_threads_at_once_equal_numpy():
    inputs = _inputs()
    wants = []
    for _, dense, present in inputs:
        rows = {i: int(dense[i, present[i]].sum()) for i in range(N) if present[i].any()}
        wants.append((int(dense[present].sum()) if present.any() else None, rows))
    values = [dp.array(a) for a, _, _ in inputs]
    bad: list = []
    start = threading.Barrier(THREADS)

    def work(k):
        start.wait()
        total, rows = wants[k]
        for _ in range(CALLS):
            got = values[k].reduce_scalar("plus").value
            r, _, v = values[k].reduce_rowwise("plus").to_coo()
            if got != total or dict(zip(r.tolist(), v.tolist())) != rows:
                bad.append((k, total, got))
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []
    keys = [k for k in dispatch._CACHE if k[0] in ("reduce_scalar", "reduce_rowwise") and k[1]]
    assert len(keys) >= 2   # (the threads' calls shared their traced operations)


def test_first_eager_calls_in_threads_at_once():
    """A fresh process whose threads make their first eager calls together: each loads what
    eager calls run with without finding a module half imported by another. (The language's
    names are read first, in one thread: the eager calls' own imports come with the first call.)"""
    script = textwrap.dedent(f"""
        import threading
        import numpy as np
        import dspla as dp
        import sys
        reduce_rows, start, out = dp.reduce_rows, threading.Barrier({THREADS}), []
        assert "dspla.reference" not in sys.modules
        def work(k):
            a = np.arange(6.0).reshape(2, 3) + k
            start.wait()
            out.append((k, reduce_rows(a, "plus").to_numpy().tolist()))
        ts = [threading.Thread(target=work, args=(k,)) for k in range({THREADS})]
        [t.start() for t in ts]
        [t.join() for t in ts]
        print(sorted(out))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    want = [(k, [[3.0 + 3 * k], [12.0 + 3 * k]]) for k in range(THREADS)]   # (2-D in: an n x 1 matrix out)
    assert done.stdout.strip() == str(want)


def test_the_first_names_asked_in_threads_at_once():
    """A fresh process whose threads ask for a language name together (the language loads with
    the first one): every thread gets it; one waits while another loads."""
    script = textwrap.dedent(f"""
        import threading
        import dspla
        start, got, errors = threading.Barrier({THREADS}), [], []
        def work():
            start.wait()
            try:
                got.append(dspla.mxm.__name__)
            except AttributeError as e:
                errors.append(str(e))
        ts = [threading.Thread(target=work) for _ in range({THREADS})]
        [t.start() for t in ts]
        [t.join() for t in ts]
        print(errors, got)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert done.stdout.strip() == f"[] {['mxm'] * THREADS}"


def test_a_traced_operation_dropped_by_another_thread_meanwhile_still_runs(monkeypatch):
    """Another thread may drop the cache's least recently used entry between this call's lookup
    and its move to the end: the call runs the operation it found."""
    a = sp.csr_array(np.array([[1.0, 0.0], [2.0, 3.0]]))
    dp.array(a).reduce_rowwise()   # (traced and kept)

    class Dropping(type(dispatch._CACHE)):
        def move_to_end(self, key, last=True):
            self.pop(key)   # (as a popitem in another thread would)
            super().move_to_end(key, last)

    monkeypatch.setattr(dispatch, "_CACHE", Dropping(dispatch._CACHE))
    r, _, v = dp.array(a).reduce_rowwise().to_coo()
    assert r.tolist() == [0, 1] and v.tolist() == [1.0, 5.0]
