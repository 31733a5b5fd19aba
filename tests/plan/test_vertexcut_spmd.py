"""vertexcut planned SPMD: each rank plans from its rows and its share of the edge partition (the
parts of the edges incident to its rows, as a shard set sharded on an edge partition holds them);
its program moves what the rank-0 plan moves, rank by rank, and the results equal the rank-0
plan's bit for bit and one process's (a GCN step, forward and backward, within 1e-12)."""
from __future__ import annotations

import graphblas as gb
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from plan.test_gcn_plans import OUTS, STEP, _small

import dspla as dp
from dspla.cli.main import main
from dspla.formats.shards import read_manifest
from dspla.instr.layout import DimPart
from dspla.partition import partition
from dspla.partition.vertex_owners import edge_table
from dspla.plan.options import Options
from dspla.runtime.comm.sim import run_simulated
from dspla.runtime.shards import load_shards
from dspla.session.driver import DistSession
from dspla.values import Array, Dist

from harness import product_oracle


def _sharded(comm, parts, edges, host, **values):
    """This rank's rows of every value, with its share of the edge table (as load_shards gives)."""
    rows = np.flatnonzero(parts == comm.rank)
    n = parts.size
    mine = np.zeros(n, dtype=bool)
    mine[rows] = True
    keep = mine[edges[0] // n] | mine[edges[0] % n]
    part = DimPart("n", parts, comm.size, "spac", (edges[0][keep], edges[1][keep]))
    out = dict(host)
    for k, v in values.items():
        piece = sp.csr_array(v)[rows] if sp.issparse(v) else np.asarray(v)[rows]
        M = gb.io.from_scipy_sparse(piece) if sp.issparse(v) else gb.Matrix.from_dense(piece)
        out[k] = Array(M, k, Dist("row", "n", part, comm), v.shape)
    return out


def _both(f, P, inputs, sharded_names, outs, method="spac", seed=3):
    A = inputs["A"]
    parts = partition(A, P, method, seed=seed, progress=False).parts
    edges = edge_table(A, P, method, 0.03, seed)
    host = {k: v for k, v in inputs.items() if k not in sharded_names}

    def spmd(comm):
        s = DistSession(f.compiled, comm, Options(plan="vertexcut", seed=seed))
        out = s.run(_sharded(comm, parts, edges, host, **{k: inputs[k] for k in sharded_names}))
        return {k: out[k].to_numpy(fill=0.0) for k in outs}, s.last_stats

    def rank0(comm, every=True):   # the graph on rank 0: it partitions, then every rank plans (or rank 0 all)
        s = DistSession(f.compiled, comm, Options(plan="vertexcut", partition=method, seed=seed, spmd=every))
        out = s.run(inputs if comm.rank == 0 else None)
        return {k: out[k].to_numpy(fill=0.0) for k in outs}, s.last_stats
    runs = [run_simulated(P, body, timeout=300)[0] for body in (spmd, rank0, lambda c: rank0(c, False))]
    for got, stats in runs[:2]:   # SPMD from shards, SPMD from memory: the rank-0 plan's results and traffic
        for k in outs:
            np.testing.assert_array_equal(got[k], runs[2][0][k], err_msg=k)
        _same_traffic(stats, runs[2][1])
    return runs[0]


def _same_traffic(stats, ref):
    assert stats["planning"] == "spmd" and ref["planning"] == "rank 0"
    for key in ("words_sent", "messages_sent", "words_received", "messages_received"):
        assert [r[key] for r in stats["per_rank"]] == [r[key] for r in ref["per_rank"]], key
    for p in stats["products"]:
        assert p["plan"] == "vertexcut" and p["words_sent_total"] == p["predicted"]["words"]


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("sr", ["plus_times", "min_plus"])
def test_product_from_shards_equals_the_rank0_plan(P, sr):
    rng = np.random.default_rng(P)
    A = sp.random_array((70, 70), density=0.08, random_state=rng, format="csr")
    A = sp.csr_array(A + A.T)
    X = rng.random((70, 5))
    f = dp.function({"C": dp.mxm(dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k")), sr)})
    got, _ = _both(f, P, {"A": A, "X": X}, ("A", "X"), ("C",))
    vals, present = product_oracle(A.toarray(), X, np.ones(X.shape, bool), sr)
    np.testing.assert_allclose(got["C"], np.where(present, vals, 0.0), rtol=1e-14, atol=0)


@pytest.mark.parametrize("P", [2, 3, 4])
def test_gcn_step_from_shards(P):
    inputs = _small(P)
    want = STEP(**inputs)
    got, _ = _both(STEP, P, inputs, ("A", "X", "Y", "T"), OUTS)
    for k in OUTS:
        np.testing.assert_allclose(got[k], want[k].to_numpy(fill=0.0), rtol=0, atol=1e-12, err_msg=k)


def test_shards_without_an_edge_partition_are_refused():
    rng = np.random.default_rng(0)
    A = sp.csr_array(sp.random_array((30, 30), density=0.1, random_state=rng, format="csr"))
    A = sp.csr_array(A + A.T)
    f = dp.function({"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})
    parts = rng.integers(0, 2, 30)

    def body(comm):
        rows = np.flatnonzero(parts == comm.rank)
        part = DimPart("n", parts, 2, "random")
        ins = {"A": Array(gb.io.from_scipy_sparse(A[rows]), "A", Dist("row", "n", part, comm), A.shape),
               "X": Array(gb.Matrix.from_dense(np.ones((rows.size, 2))), "X", Dist("row", "n", part, comm), (30, 2))}
        DistSession(f.compiled, comm, Options(plan="vertexcut")).run(ins)
    with pytest.raises(dp.DsplaError, match="vertexcut from shards needs a set sharded on an edge partition"):
        run_simulated(2, body, timeout=60)


def test_a_set_sharded_on_spac_plans_vertexcut_on_every_rank(tmp_path):
    """``dspla shard --method spac`` writes each rank its share of the edge partition; a job that
    loads the set plans vertexcut SPMD, moving what the rank-0 plan moves, with its results."""
    rng = np.random.default_rng(5)
    A = sp.random_array((80, 80), density=0.07, random_state=rng, format="csr")
    A = sp.csr_array(A + A.T)
    X = rng.random((80, 4))
    scipy.io.mmwrite(tmp_path / "g.mtx", A)
    np.save(tmp_path / "x.npy", X)
    assert main(["shard", "-i", f"A={tmp_path / 'g.mtx'}", "-i", f"X={tmp_path / 'x.npy'}", "-P", "3", "--method",
                 "spac", "--seed", "2", "--out", str(tmp_path / "s"), "-q"]) == 0
    assert read_manifest(tmp_path / "s")["edges"] == "spac"
    f = dp.function({"C": dp.sparse("A", ("n", "n")) @ dp.dense("X", ("n", "k"))})

    def shards(comm):
        s = DistSession(f.compiled, comm, Options(plan="vertexcut", seed=2))
        out = s.run(load_shards(str(tmp_path / "s"), comm))
        return out["C"].to_numpy(fill=0.0), s.last_stats

    def rank0(comm):
        s = DistSession(f.compiled, comm, Options(plan="vertexcut", partition="spac", seed=2, spmd=False))
        out = s.run({"A": A, "X": X} if comm.rank == 0 else None)
        return out["C"].to_numpy(fill=0.0), s.last_stats
    (got, stats), (ref, ref_stats) = run_simulated(3, shards, timeout=120)[0], run_simulated(3, rank0, timeout=120)[0]
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_allclose(got, A @ X, rtol=1e-14)
    _same_traffic(stats, ref_stats)
