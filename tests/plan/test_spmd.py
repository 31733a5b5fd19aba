"""SPMD planning (plan/spmd.py): with the graph sharded by rows, every rank plans its own program.
Checked against dense numpy with GraphBLAS semantics (a row of A with no entries gives a
missing row), against the rank-0 path on the same partition (bit for bit, same traffic), for
many P on simulated ranks, up to 64."""
from __future__ import annotations

import graphblas as gb
import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
import dspla.compiler as compiler
from dspla.frontend.parser import parse_file
from dspla.instr.layout import DimPart
from dspla.plan import facts, spmd
from dspla.plan.options import Options
from dspla.plan.plans import spmd_names
from dspla.plan.spmd import exchange
from dspla.runtime.comm.sim import run_simulated
from dspla.session import DistSession
from dspla.values import Array, Dist


def graph(n=200, density=0.03, seed=0, empty=(3, 4)):
    rng = np.random.default_rng(seed)
    A = sp.random_array((n, n), density=density, rng=rng, format="csr")
    A.data[:] = rng.integers(1, 9, A.nnz)
    keep = np.ones(n)
    keep[list(empty)] = 0
    A = sp.csr_array(sp.diags_array(keep) @ A)
    A.eliminate_zeros()
    X = rng.integers(-5, 9, (n, 5)).astype(float)
    return A, X


def sharded(comm, parts, **values) -> dict:
    """This rank's rows of every value, as load_shards returns them (no files)."""
    part = DimPart("n", parts, comm.size, "test")
    rows = part.owned[comm.rank]
    out = {}
    for k, v in values.items():
        piece = sp.csr_array(v)[rows] if sp.issparse(v) else np.asarray(v)[rows]
        M = gb.io.from_scipy_sparse(piece) if sp.issparse(v) else gb.Matrix.from_dense(piece)
        out[k] = Array(M, k, Dist("row", "n", part, comm), v.shape)
    return out


def run_both(f, P, parts, A, X, **options):
    """((sharded) result, stats, explain), ((in memory, same partition) result, stats)."""
    def spmd(comm):
        s = DistSession(f.compiled, comm, Options(**options))
        out = s.run(sharded(comm, parts, A=A, X=X))
        return {k: v.to_numpy(fill=np.nan) for k, v in out.items()}, s.last_stats, s.explain() if comm.rank == 0 else ""

    def rank0(comm):
        s = DistSession(f.compiled, comm, Options(parts=parts, partition="file", spmd=False, **options))
        out = s.run({"A": A, "X": X} if comm.rank == 0 else None)
        return {k: v.to_numpy(fill=np.nan) for k, v in out.items()}, s.last_stats
    return run_simulated(P, spmd, timeout=120)[0], run_simulated(P, rank0, timeout=120)[0]


def oracle_plus_times(A, X):
    C = A.toarray() @ X
    C[np.diff(A.indptr) == 0] = np.nan    # no entry in the row: the product's row is missing
    return C


def oracle_min_plus(A, X):
    D = np.where(A.toarray() != 0, A.toarray(), np.inf)
    C = (D[:, :, None] + X[None, :, :]).min(axis=1)
    C[np.diff(A.indptr) == 0] = np.nan
    return C


def same(got, want):
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.array_equal(got[~np.isnan(got)], want[~np.isnan(want)])


@pytest.mark.parametrize("P", [1, 2, 3, 5, 16, 64])
def test_exchange_builds_the_send_lists(P):
    """Every rank asks owners for ids; each owner learns exactly what each rank asked of it."""
    def body(comm):
        rng = np.random.default_rng(comm.rank)
        want = {q: np.sort(rng.choice(1000, rng.integers(0, 5), replace=False)) for q in range(comm.size)
                if q != comm.rank and rng.random() < 0.5}
        return want, exchange(comm, want)
    got = run_simulated(P, body)
    for r, (_, sends) in enumerate(got):
        asked = {q: w[r] for q, (w, _) in enumerate(got) if r in w and len(w[r])}
        assert sends.keys() == asked.keys()
        assert all(np.array_equal(sends[q], asked[q]) for q in asked)


def cases():
    """(plan, P) for every plan with an SPMD lowering, at the P it runs on (2d: square; 15d and
    shift1d: even, with c = 2), and auto."""
    out = []
    for plan in [*spmd_names(general=True), "auto"]:
        for P in (1, 2, 3, 4, 7, 9):
            if plan == "2d" and int(P ** 0.5) ** 2 != P or plan in ("15d", "shift1d", "15d_sparse") and P % 2:
                continue
            out.append((plan, P))
    return out


@pytest.mark.parametrize("plan,P", cases())
@pytest.mark.parametrize("sr,oracle", [("plus_times", oracle_plus_times), ("min_plus", oracle_min_plus)])
def test_product_from_shards(plan, P, sr, oracle):
    A, X = graph(seed=P)
    parts = np.random.default_rng(P).integers(0, P, A.shape[0])
    a, x = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    f = dp.function({"C": dp.mxm(a, x, sr)})
    (got, stats, text), (ref, ref_stats) = run_both(f, P, parts, A, X, plan=plan, replication=2, stripe_width=4,
                                                    ranks_per_node=2)
    same(got["C"], oracle(A, X))
    same(got["C"], ref["C"])                            # the rank-0 path, same partition: bit for bit
    assert stats["planning"] == "spmd" and ref_stats["planning"] == "rank 0"
    assert "planning: SPMD" in text
    assert stats["plan"] == ref_stats["plan"]           # the same choice, from the same counts
    assert stats["words_sent_total"] == ref_stats["words_sent_total"]
    assert stats["messages_sent_total"] == ref_stats["messages_sent_total"]
    assert all(r["peak_rss_bytes"] > 0 and r["planning_s"] > 0 for r in stats["per_rank"])


@pytest.mark.parametrize("P", [16, 64])
def test_many_ranks(P):
    """SPMD planning with more ranks than a machine has cores, some owning no row at all."""
    A, X = graph(n=300, seed=1)
    parts = np.random.default_rng(0).integers(0, P - 3, A.shape[0])   # the last three ranks own nothing
    a, x = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    f = dp.function({"C": a @ x})
    (got, stats, _), (ref, ref_stats) = run_both(f, P, parts, A, X, plan="p2p1d")
    same(got["C"], oracle_plus_times(A, X))
    same(got["C"], ref["C"])
    assert stats["words_sent_total"] == ref_stats["words_sent_total"]


@pytest.mark.parametrize("P", [1, 2, 4, 5])
def test_static_values_computed_distributed(P):
    """Â = D^-1/2 (A+I) D^-1/2 and Âᵀ from the shards (a distributed transpose), as GCN needs."""
    A, X = graph(seed=7, empty=())
    A = sp.csr_array((A + A.T) / 2)
    A.data[:] = 1
    B, _ = graph(seed=8, empty=())            # not symmetric: the transpose must be real
    a, x = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    At = a + dp.eye("n")
    dinv = dp.reduce_rows(At) ** -0.5
    Ah = At * dinv * dinv.T
    f = dp.function({"U": Ah @ x, "T": Ah.T @ x, "S": a.T @ x})
    parts = np.random.default_rng(P).integers(0, P, A.shape[0])
    for M in (A, B):
        (got, stats, _), (ref, _) = run_both(f, P, parts, M, X)
        assert stats["planning"] == "spmd"
        At_ = M.toarray() + np.eye(M.shape[0])
        d = At_.sum(axis=1) ** -0.5
        Ah_ = At_ * d[:, None] * d[None, :]
        np.testing.assert_allclose(got["U"], Ah_ @ X, rtol=1e-12)
        np.testing.assert_allclose(got["T"], Ah_.T @ X, rtol=1e-12)
        same(got["S"], oracle_plus_times(sp.csr_array(M.T), X))
        for k in ("U", "T", "S"):
            same(got[k], ref[k])


def test_dynamic_transpose_moves_entries_not_the_matrix():
    """A transpose of a value computed at run time (not the graph) by TransposeRows."""
    A, X = graph(seed=3)
    a, x = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    f = dp.function({"S": dp.transpose(a * (x @ x.T))})
    S = (A.toarray() * (X @ X.T)).T
    want = np.where(A.toarray().T != 0, S, np.nan)
    for P in (2, 3):
        parts = np.random.default_rng(P).integers(0, P, A.shape[0])
        (got, _, _), (ref, _) = run_both(f, P, parts, A, X)
        same(got["S"], want)
        same(ref["S"], want)
    # the plan moves entries to their new owners, and gathers no n x n value anywhere
    instrs = f.plan(3, {"A": A, "X": X}).plan.programs[1].instrs
    assert any(type(i).__name__ == "TransposeRows" for i in instrs)
    assert not any(getattr(i, "shape", None) == (200, 200) for i in instrs)   # (X is gathered: 5 x 200)


def test_what_cannot_be_planned_spmd_falls_back_and_says_so():
    """A partition other than the shards' (a partition file): planned on rank 0, the graph
    gathered there, and explain and the stats say why."""
    A, X = graph()
    P = 3
    parts = np.random.default_rng(0).integers(0, P, A.shape[0])
    other = np.arange(A.shape[0]) % P
    a, x = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    f = dp.function({"C": a @ x})

    def body(comm):
        s = DistSession(f.compiled, comm, Options(parts=other, partition="file"))
        out = s.run(sharded(comm, parts, A=A, X=X))
        return out["C"].to_numpy(fill=np.nan), s.last_stats, s.explain() if comm.rank == 0 else ""
    got, stats, text = run_simulated(P, body)[0]
    same(got, oracle_plus_times(A, X))
    assert stats["planning"] == "rank 0" and "a partition file was given" in stats["planning_note"]
    assert "planning: planned on rank 0, the sharded graph gathered there: a partition file" in text


@pytest.mark.parametrize("cap,kinds", [(1, "153 async / 0 sync"), (13000, "85 async / 68 sync"), (None, "0 async")])
def test_twoface_stripes_from_shards(cap, kinds):
    """twoface's stripes classified on every rank for itself, the broadcast groups from one
    allgather of the sync stripes, what each owner serves from the others' gets: async, mixed
    and sync stripes alike equal the rank-0 plan's."""
    A, X = graph(seed=4)
    parts = np.random.default_rng(4).integers(0, 4, A.shape[0])
    a, x = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    f = dp.function({"C": a @ x})
    (got, stats, text), (ref, ref_stats) = run_both(f, 4, parts, A, X, plan="twoface", stripe_width=4,
                                                    memory_cap=cap)
    assert kinds in text and stats["planning"] == "spmd"
    same(got["C"], oracle_plus_times(A, X))
    same(got["C"], ref["C"])
    for k in ("words_sent_total", "messages_sent_total", "words_sent_max"):
        assert stats[k] == ref_stats[k], k


@pytest.mark.parametrize("cover", [True, False])
def test_facts_of_pieces_are_the_whole_values(cover):
    """A fact proved from the ranks' pieces is the whole value's: a rank with no rows is
    vacuously full but covers no column; columns are covered by the ranks together."""
    n = 6
    M = np.zeros((n, n))
    M[0, :3] = 1
    M[4, 3:] = 1        # every column covered, by two ranks together
    if not cover:
        M[4, 5] = 0
    M[[1, 2, 3, 5], 0] = 1
    A = sp.csr_array(M)
    parts = np.array([0, 0, 2, 2, 2, 2])   # rank 1 owns nothing
    a = dp.sparse("A", ("n", "n"))
    order = dp.function({"C": a @ dp.dense("X", ("n", "k"))}).program.toposort()
    node = next(x for x in order if x.op.name == "INPUT" and x.attr("name") == "A")

    def body(comm):
        piece = sharded(comm, parts, A=A)["A"]._piece
        return spmd.prove([node], {id(node): piece}, comm, {"n": DimPart("n", parts, 3)})[id(node)]
    want = facts.of_matrix(gb.io.from_scipy_sparse(A))
    for got in run_simulated(3, body):
        assert (got.full, got.rows, got.cols) == (want.full, want.rows, want.cols) == (False, True, cover)


def test_static_value_wanted_in_another_layout():
    """A derived static value a dynamic op needs replicated (dinvᵀ, 1 x n, scaling columns of a
    run-time value): converted once, by the plan's setup block."""
    A, X = graph(seed=5, empty=())
    a, x = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    dinv = dp.reduce_rows(a) ** -1
    f = dp.function({"S": (a * (x @ x.T)) * dinv.T})
    deg = A.toarray().sum(axis=1)
    d = np.divide(1, deg, out=np.full(deg.shape, np.nan), where=deg > 0)   # a row without entries: missing
    want = np.where((A.toarray() != 0) & (deg > 0)[None, :], A.toarray() * (X @ X.T) * d[None, :], np.nan)
    parts = np.random.default_rng(3).integers(0, 3, A.shape[0])
    (got, stats, _), (ref, _) = run_both(f, 3, parts, A, X)
    assert stats["planning"] == "spmd"
    np.testing.assert_allclose(got["S"], want, rtol=1e-12)
    same(got["S"], ref["S"])


@pytest.mark.parametrize("plan", [*spmd_names(general=True), "auto"])
def test_in_memory_path_is_the_spmd_path(plan):
    """Inputs given on rank 0: rank 0 partitions and sends every rank its rows, then every rank
    plans for itself; the same results and traffic as rank 0 planning every program."""
    A, X = graph(seed=11)
    a, x = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    f = dp.function({"C": a @ x, "D": dp.reduce_rows(a.T) * x})

    def body(comm, spmd):
        s = DistSession(f.compiled, comm, Options(plan=plan, partition="random", replication=2, spmd=spmd))
        out = s.run({"A": A, "X": X} if comm.rank == 0 else None)
        return {k: v.to_numpy(fill=np.nan) for k, v in out.items()}, s.last_stats, s.explain() if comm.rank == 0 \
            else ""
    got, stats, text = run_simulated(4, body, True)[0]
    ref, ref_stats, ref_text = run_simulated(4, body, False)[0]
    assert stats["planning"] == "spmd" and ref_stats["planning"] == "rank 0"
    assert "planning: SPMD" in text and "partition random" in text
    same(got["C"], oracle_plus_times(A, X))
    for k in ("C", "D"):
        same(got[k], ref[k])
    for k in ("plan", "partition", "words_sent_total", "messages_sent_total"):
        assert stats[k] == ref_stats[k], k


@pytest.mark.parametrize("op,k", [("tril", -1), ("triu", 0), ("diag", 0), ("offdiag", 0), ("tril", 2)])
def test_position_selects_run_on_the_pieces(op, k):
    """tril/triu/diag of a row-distributed value from its rows' global ids (nothing gathered),
    and the triangle count of examples/triangles.dspla from shards against networkx."""
    A, X = graph(n=60, density=0.2, seed=2)
    a = dp.sparse("A", ("n", "n"))
    f = dp.function({"L": dp.select(a, op, k)})
    i, j = np.indices(A.shape)
    keep = {"tril": j - i <= k, "triu": j - i >= k, "diag": j - i == k, "offdiag": j - i != k}[op]
    want = np.where((A.toarray() != 0) & keep, A.toarray(), np.nan)
    parts = np.random.default_rng(1).integers(0, 3, 60)

    def body(comm):
        out = DistSession(f.compiled, comm, Options()).run(sharded(comm, parts, A=A))
        return out["L"].to_numpy(fill=np.nan)
    same(run_simulated(3, body)[0], want)


def test_triangles_from_shards():
    A, _ = graph(n=80, density=0.1, seed=6, empty=())
    G = nx.from_scipy_sparse_array(A + A.T)
    G.remove_edges_from(nx.selfloop_edges(G))
    want = sum(nx.triangles(G).values()) // 3
    f = dp.Function(parse_file("examples/triangles.dspla"))
    parts = np.random.default_rng(0).integers(0, 4, 80)

    def body(comm):
        s = DistSession(f.compiled, comm, Options())
        out = s.run(sharded(comm, parts, A=A))
        return int(out["triangles"].to_numpy()[0, 0]), s.last_stats and s.last_stats["planning"]
    assert run_simulated(4, body)[0] == (want, "spmd")   # (the stats are rank 0's)


def test_a_failure_while_rank0_partitions_ends_every_rank(monkeypatch):
    """Rank 0's part of the in-memory path (partitioning the graph it holds) runs where a failure
    ends every rank at once: the others are not left waiting for their rows."""
    def broken(*a, **k):
        raise RuntimeError("partitioner crashed")
    monkeypatch.setattr(compiler.partitioning, "partition_dims", broken)
    A, X = graph()
    f = dp.function({"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})

    def body(comm):
        DistSession(f.compiled, comm, Options()).run({"A": A, "X": X} if comm.rank == 0 else None)
    with pytest.raises(Exception, match="partitioner crashed"):
        run_simulated(3, body, timeout=20)


def test_pagerank_loop_from_shards():
    """examples/pagerank.dspla (a loop, Aᵀ and the out-degrees derived from the graph) with the
    graph and the start vector sharded: networkx's ranks, and rank-0 planning's bit for bit."""
    A, _ = graph(n=150, density=0.04, seed=9)
    A.data[:] = 1
    f = dp.Function(parse_file("examples/pagerank.dspla"))
    r0 = np.ones((150, 1))
    parts = np.random.default_rng(2).integers(0, 3, 150)

    def body(comm, how):
        if how == "shards":
            s = DistSession(f.compiled, comm, Options())
            out = s.run(sharded(comm, parts, A=A, r0=r0))
        else:
            s = DistSession(f.compiled, comm, Options(parts=parts, partition="file", spmd=False))
            out = s.run({"A": A, "r0": r0} if comm.rank == 0 else None)
        return out["r"].to_numpy()[:, 0], s.last_stats and s.last_stats["planning"]
    (got, how), (ref, how_ref) = run_simulated(3, body, "shards")[0], run_simulated(3, body, "rank 0")[0]
    assert (how, how_ref) == ("spmd", "rank 0")
    assert np.array_equal(got, ref)
    G = nx.from_scipy_sparse_array(A, create_using=nx.DiGraph)
    want = nx.pagerank(G, alpha=0.85, tol=1e-13, max_iter=500, weight=None)
    np.testing.assert_allclose(got, [want[i] for i in range(150)], rtol=1e-7, atol=1e-12)


def test_derived_value_on_a_dim_the_shards_do_not_partition():
    """Xᵀ of sharded sparse features (f x n: its rows are on f, which the shards do not
    partition): both the small plan that computes it and the program lay it out by f's blocks."""
    A, Y = graph(n=120, seed=12)
    rng = np.random.default_rng(0)
    X = sp.random_array((120, 9), density=0.3, rng=rng, format="csr")
    X.data[:] = rng.integers(1, 5, X.nnz)
    a, xs, y = dp.sparse("A", ("n", "n")), dp.sparse("X", ("n", "f")), dp.dense("Y", ("n", "k"))
    f = dp.function({"T": xs.T @ y, "U": a @ y})
    parts = np.random.default_rng(5).integers(0, 3, 120)

    def body(comm, spmd_):
        if spmd_:
            s = DistSession(f.compiled, comm, Options())
            out = s.run(sharded(comm, parts, A=A, X=X, Y=Y))
        else:
            s = DistSession(f.compiled, comm, Options(parts=parts, partition="file", spmd=False))
            out = s.run({"A": A, "X": X, "Y": Y} if comm.rank == 0 else None)
        return {k: v.to_numpy(fill=np.nan) for k, v in out.items()}
    got, ref = run_simulated(3, body, True)[0], run_simulated(3, body, False)[0]
    same(got["T"], oracle_plus_times(sp.csr_array(X.T), Y))
    for k in ("T", "U"):
        same(got[k], ref[k])


def test_the_leader_kept_while_lowering_is_the_candidate_picked():
    """SPMD planning keeps only the leader so far of a product's candidates as it lowers them
    (choose.keep_leader) and drops the rest's pieces; the leader rule is pick's own (pricing.select), so
    the candidate picked at the end is never one dropped. Random records: costs with ties,
    candidates over the memory cap, and all over the cap (the smallest is taken)."""
    from dspla.plan.pricing import select as _select
    rng = np.random.default_rng(3)
    for _ in range(2000):
        recs = []
        for i in range(int(rng.integers(1, 7))):
            cand = {"plan": f"p{i}", "predicted_s": float(rng.integers(0, 4)), "memory_bytes": int(rng.integers(0, 4))}
            if rng.random() < 0.4:
                cand["skipped"] = "over the cap"
            recs.append((object(), cand))
        kept = None   # the leader of the candidates lowered so far: the only one still holding pieces
        for k in range(len(recs)):
            leader = _select(recs[:k + 1])[0]
            assert leader is kept or leader is recs[k][0]   # never one dropped before
            kept = leader
        assert kept is _select(recs)[0]


@pytest.mark.parametrize("P", [4, 9])
def test_15d_sparse_weighs_c_alike_on_every_rank(P):
    """SPMD planning weighs 15d_sparse's c from every rank's counts: the rank-0 plan's choice."""
    A, X = graph(seed=P)
    parts = np.random.default_rng(P).integers(0, P, A.shape[0])
    f = dp.function({"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})
    (got, stats, text), (ref, ref_stats) = run_both(f, P, parts, A, X, plan="15d_sparse")
    same(got["C"], oracle_plus_times(A, X))
    same(got["C"], ref["C"])
    assert stats["planning"] == "spmd" and "c by the model" in text
    assert stats["words_sent_total"] == ref_stats["words_sent_total"]
    assert stats["products"][0]["notes"] == ref_stats["products"][0]["notes"]
