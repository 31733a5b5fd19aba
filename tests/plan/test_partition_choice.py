"""--partition auto: a partitioner runs only when the run repays its time; cached partitions are
free; explain shows partitioning time, saving per iteration and the break-even count."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.analysis import comm_stats
from dspla.partition import partition
from dspla.plan import partition_choice
from dspla.plan.options import Options


@pytest.fixture
def grid():
    """A 100 x 100 grid graph with its vertices shuffled: contiguous blocks of rows cut almost
    every edge, a graph partitioner almost none."""
    n = 100
    idx = np.arange(n * n).reshape(n, n)
    src = np.r_[idx[:, :-1].ravel(), idx[:-1, :].ravel()]
    dst = np.r_[idx[:, 1:].ravel(), idx[1:, :].ravel()]
    perm = np.random.default_rng(0).permutation(n * n)
    A = sp.csr_array((np.ones(2 * src.size), (perm[np.r_[src, dst]], perm[np.r_[dst, src]])), shape=(n * n, n * n))
    return A


def _f():
    A, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    return dp.function(outputs={"T": A @ X})


def _plan(A, iterations, cache=True):
    out = _f().explain(np=2, json=True, A=A, X=np.ones((A.shape[0], 64)), iterations=iterations, cache=cache)
    return out["dims"]["n"]


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DSPLA_CACHE_DIR", str(tmp_path / "cache"))


def test_a_one_shot_run_does_not_pay_for_a_partitioner(grid):
    d = _plan(grid, iterations=1)
    assert d["partition"] == "block"
    rows = {c["method"]: c for c in d["partition_choice"]["candidates"]}
    assert not rows["graph"]["ran"] and "repay it after" in rows["graph"]["why"]
    assert not rows["hypergraph"]["ran"]


def test_a_long_run_pays_for_metis_and_says_when_it_is_repaid(grid):
    d = _plan(grid, iterations=1000)
    assert d["partition"] == "graph"
    ch = d["partition_choice"]
    rows = {c["method"]: c for c in ch["candidates"]}
    assert rows["graph"]["ran"] and rows["graph"]["exchange_s"] < 0.2 * rows["block"]["exchange_s"]
    assert ch["saving_per_iteration_s"] == pytest.approx(rows["block"]["exchange_s"] - rows["graph"]["exchange_s"])
    assert ch["break_even_iterations"] == int(np.ceil(ch["seconds_all"] / ch["saving_per_iteration_s"]))
    assert ch["break_even_iterations"] <= 1000 and d["partition_s"] > 0
    # the hypergraph partitioner is not expected to beat METIS's exchange by enough here
    assert not rows["hypergraph"]["ran"]


def test_the_exchange_is_the_busiest_process_volume_times_the_widths(grid):
    d = _plan(grid, iterations=1)
    parts = (np.arange(grid.shape[0]) * 2) // grid.shape[0]
    s = comm_stats(grid, parts, 2).summary()
    per_word = partition_choice.word_seconds(2, Options())
    block = {c["method"]: c for c in d["partition_choice"]["candidates"]}["block"]
    assert block["exchange_s"] == pytest.approx(max(s["volume_max"], s["volume_recv_max"]) * 64 * per_word)


def test_a_cached_partition_is_free(grid):
    hp = partition(grid, 2, "hypergraph", seed=0)   # stored in the (temporary) cache
    d = _plan(grid, iterations=1)
    rows = {c["method"]: c for c in d["partition_choice"]["candidates"]}
    assert rows["hypergraph"]["ran"] and rows["hypergraph"]["cached"] and rows["hypergraph"]["seconds"] == 0.0
    assert rows["hypergraph"]["exchange_s"] < rows["block"]["exchange_s"]
    assert d["partition"] in ("hypergraph", "graph") and hp.parts.size == grid.shape[0]


def test_explain_text_shows_the_choice(grid):
    text = _f().explain(np=2, A=grid, X=np.ones((grid.shape[0], 64)), iterations=1000)
    line = next(ln for ln in text.splitlines() if "partition auto" in ln)
    assert "for a run of 1000 iterations" in line and "graph, partitioning" in line and "repaid after" in line
    assert "saving" in line and "ms per iteration over block" in line


def test_without_products_over_the_dim_nothing_is_partitioned_for_nothing():
    A = dp.sparse("A", ("n", "n"))
    f = dp.function(outputs={"S": dp.reduce_rows(A, "plus")})
    a = sp.random_array((500, 500), density=0.01, random_state=1, format="csr")
    out = f.explain(np=2, json=True, A=a)
    assert all(d["partition"] == "block" for d in out["dims"].values())


def test_a_loops_products_count_at_the_loops_bound(grid):
    """The product in a loop body (on Aᵀ, read through the loop's placeholder for an outside
    value) moves its rows every iteration: it counts K times the bound per run, and the text says
    'per run'. It was left out (K total 0: a run looked like one exchange of one word per row)."""
    A = dp.sparse("A", ("n", "n"))
    r0 = dp.dense("r0", ("n", 4))
    AT = A.T

    def body(r):
        return (AT @ r,)

    (r,) = dp.while_loop(lambda r: dp.reduce_all(r) > 0.0, body, (r0,), max_iter=20000)
    out = dp.function(outputs={"r": r}).explain(np=2, json=True, A=grid, r0=np.ones((grid.shape[0], 4)),
                                                iterations=1)
    ch = out["dims"]["n"]["partition_choice"]
    assert ch["width"] == 4 * 20000 and ch["loops"]
    # 20,000 exchanges of 4 words per row in one run repay METIS (a one-exchange run did not, above)
    assert out["dims"]["n"]["partition"] == "graph"
    text = dp.function(outputs={"r": r}).explain(np=2, A=grid, r0=np.ones((grid.shape[0], 4)), iterations=1)
    line = next(ln for ln in text.splitlines() if "partition auto" in ln)
    assert "for 1 runs (products' K total 80000 per run, loops at their bound" in line and "ms per run" in line
    # a bound that is a dim's size (max n: a safety bound) counts as log2 of it: 10,000 nodes, 14
    (r,) = dp.while_loop(lambda r: dp.reduce_all(r) > 0.0, body, (r0,), max_iter="n")
    out = dp.function(outputs={"r": r}).explain(np=2, json=True, A=grid, r0=np.ones((grid.shape[0], 4)),
                                                iterations=1)
    assert out["dims"]["n"]["partition_choice"]["width"] == 4 * 14


def test_a_partitioner_not_expected_to_win_is_not_priced_as_a_negative_saving(grid):
    d = _plan(grid, iterations=1000)
    hyper = {c["method"]: c for c in d["partition_choice"]["candidates"]}["hypergraph"]
    assert not hyper["ran"] and hyper["why"].startswith("not run: expected to exchange ~")
    assert "no less than graph" in hyper["why"] and "never" not in hyper["why"]
