"""A traversal's level writes (kernels/levels.py) against numpy: C<struct(q)> = value level by
level, for pulled (bitmap) and pushed (sparse) frontiers, int64 and float64 values bit for bit,
more than 255 pulled levels (the stamps settled on the way), and a run cut short by an error."""
import graphblas as gb
import numpy as np
import pytest

from dspla.kernels import levels, traverse
from dspla.kernels.levels import LevelWriter


@pytest.fixture(autouse=True)
def _small_graphs_stamped(monkeypatch):
    monkeypatch.setattr(levels, "MIN_NODES", 0)   # (these graphs are small: stamped all the same)


def _matrix(dtype, n, rows, values, sparsity):
    M = gb.Matrix(dtype, n, 1)
    M.build(np.asarray(rows, np.int64), np.zeros(len(rows), np.int64), values)
    M.ss.config["sparsity_control"] = sparsity
    M.wait()
    return M


def _frontiers(n, seen, rng, count):
    """Disjoint frontiers outside ``seen`` (as a BFS makes them), each bitmap or sparse."""
    free = np.setdiff1d(np.arange(n), seen)
    rng.shuffle(free)
    sizes = rng.integers(0, max(2, len(free) // count), count)
    out, at = [], 0
    for k in sizes:
        out.append((free[at:at + k], "bitmap" if rng.random() < 0.7 else "sparse"))
        at += k
    return out


def _run(dtype, n, start, values, rng, levels, fail_at=None, took=None):
    """(C as the writer leaves it, the expected dense values and presence); ``took``: a list given
    whether each level was stamped (True) or written by GraphBLAS."""
    C = _matrix(dtype, n, start, np.array(values[:len(start)], dtype), "bitmap")
    want = np.zeros(n, dtype)
    have = np.zeros(n, bool)
    want[start], have[start] = values[:len(start)], True
    w = LevelWriter("INT64" if dtype == np.int64 else "FP64")
    w.start(C)
    try:
        for k, (rows, sparsity) in enumerate(_frontiers(n, start, rng, levels)):
            if k == fail_at:
                raise KeyboardInterrupt
            v = values[len(start) + k]
            q = _matrix(bool, n, rows, np.ones(len(rows), bool), sparsity)
            before = w.levels
            w(C, q, v)
            if took is not None:
                took.append(w.levels > before or (before == 255 and w.levels == 1))
            want[rows], have[rows] = v, True
            assert q.nvals == len(rows)   # (q handed back as it was)
    finally:
        w.finish(C)
    return C, want, have


def _dense(C, dtype):
    idx, _, vals = C.to_coo()
    out, have = np.zeros(C.nrows, dtype), np.zeros(C.nrows, bool)
    out[idx], have[idx] = vals, True
    return out, have


@pytest.mark.parametrize("levels", [5, 600])
def test_int64_levels_equal_numpy(levels):
    rng = np.random.default_rng(levels)
    n = 20000   # (600 levels, about 420 of them pulled: the stamps settled on the way)
    values = list(range(7, 7 + 3 * (levels + 2), 3))
    C, want, have = _run(np.int64, n, [3, 11], values, rng, levels)
    got, got_have = _dense(C, np.int64)
    assert (got_have == have).all() and (got[have] == want[have]).all()
    assert C.nvals == have.sum()


def test_float64_values_bit_for_bit():
    rng = np.random.default_rng(5)
    n = 3000
    values = [0.5, -0.0, 0.1 + 0.2, -np.inf, np.nan, 1e-310, -3.25] + list(np.linspace(-1, 1, 30))
    C, want, have = _run(np.float64, n, [0], values, rng, 30)
    got, got_have = _dense(C, np.float64)
    assert (got_have == have).all()
    assert (got[have].view(np.int64) == want[have].view(np.int64)).all()


def test_a_run_cut_short_still_writes_its_levels():
    rng = np.random.default_rng(9)
    with pytest.raises(KeyboardInterrupt):
        _run(np.int64, 2000, [1], list(range(40)), rng, 20, fail_at=6)
    # the writer settles what it stamped before the error: run again, the same writer's arrays reused
    C, want, have = _run(np.int64, 2000, [1], list(range(40)), np.random.default_rng(9), 20)
    got, got_have = _dense(C, np.int64)
    assert (got_have == have).all() and (got[have] == want[have]).all()


def test_an_iso_target_is_written_by_graphblas_first():
    C = _matrix(np.int64, 50, [0, 1], np.array([4, 4]), "bitmap")   # (one value for all: iso)
    w = LevelWriter("INT64")
    w.start(C)
    w(C, _matrix(bool, 50, [5, 6, 7], np.ones(3, bool), "bitmap"), 9)
    w(C, _matrix(bool, 50, [8], np.ones(1, bool), "bitmap"), 10)
    w.finish(C)
    got, have = _dense(C, np.int64)
    assert list(np.flatnonzero(have)) == [0, 1, 5, 6, 7, 8]
    assert list(got[have]) == [4, 4, 9, 9, 9, 10]


def test_without_numbas_compiler_graphblas_writes_every_level(monkeypatch):
    import numba

    monkeypatch.setattr(numba.config, "DISABLE_JIT", True)
    monkeypatch.setattr(traverse, "compiled", traverse.compiled.__wrapped__)   # (not the cached kernels)
    took: list = []
    C, want, have = _run(np.int64, 3000, [2], list(range(50)), np.random.default_rng(3), 30, took=took)
    got, got_have = _dense(C, np.int64)
    assert (got_have == have).all() and (got[have] == want[have]).all()
    assert not any(took)


def test_pulled_levels_are_stamped_and_pushed_ones_are_not():
    took: list = []
    _run(np.int64, 3000, [2], list(range(50)), np.random.default_rng(3), 30, took=took)
    assert any(took) and not all(took)


def test_a_small_graph_is_written_by_graphblas(monkeypatch):
    monkeypatch.setattr(levels, "MIN_NODES", 3001)
    took: list = []
    C, want, have = _run(np.int64, 3000, [2], list(range(50)), np.random.default_rng(3), 30, took=took)
    got, got_have = _dense(C, np.int64)
    assert (got_have == have).all() and (got[have] == want[have]).all()
    assert not any(took)


def test_without_a_place_for_numbas_cache_the_kernels_compile_uncached(monkeypatch):
    """traverse._jit, which compiles every kernel: uncached where numba has no place for its cache,
    and the kernels so made stamp and settle as numpy does."""
    import numba

    made, real = [], numba.njit

    def njit(**options):
        if options.get("cache"):   # (numba's words when no cache locator is writable)
            raise RuntimeError("cannot cache function '_stamp': no locator available for file 'traverse.py'")
        made.append(options)
        return real(**options)
    monkeypatch.setattr(numba, "njit", njit)
    stamp, settle = traverse._jit(traverse._stamp), traverse._jit(traverse._settle)
    rng = np.random.default_rng(4)
    marks, cb = np.zeros(500, np.uint8), np.zeros(500, np.uint8)
    part = rng.integers(0, 5, 500)   # (disjoint frontiers, as a BFS makes them; 0, 4: never reached)
    pulled = [(part == level).astype(np.uint8) for level in (1, 2, 3)]
    for level, qb in enumerate(pulled, 1):
        stamp(marks, cb, qb, np.uint8(level))
    table = np.array([0, 40, 41, 43], np.int64)   # (uneven: read from the table)
    cx = np.full(500, -1, np.int64)
    settle(cx, marks, table, 3)
    want = np.full(500, -1, np.int64)
    for level in (1, 2, 3):
        want[part == level] = table[level]
    assert (cx == want).all() and (cb == np.maximum.reduce(pulled)).all() and not marks.any()
    assert len(made) == 2 and not any(m["cache"] for m in made)


@pytest.mark.parametrize("table", [np.r_[0, 7 + 3 * np.arange(200)], np.r_[0, 5, 6, 9, 10, 11, 40],
                                   np.r_[0, np.array([0.5, 1.0, 1.5, 2.0]).view(np.int64)], np.r_[0, -4, 2**62]])
def test_settle_writes_each_stamp_its_tables_value(table):
    """Evenly spaced values (computed from the stamp) or any others (read from the table): both
    numpy's take, every unstamped slot kept, the stamps cleared."""
    levels = len(table) - 1   # (a table padded to 256 entries, as LevelWriter holds it)
    rng = np.random.default_rng(levels)
    stamp = rng.integers(0, levels + 1, 5000).astype(np.uint8)
    cx = rng.integers(-2**62, 2**62, 5000)
    want = np.where(stamp != 0, table.astype(np.int64)[stamp], cx)
    traverse.compiled().settle(cx, stamp, table.astype(np.int64), levels)
    assert (cx == want).all() and not stamp.any()
