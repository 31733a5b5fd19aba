"""Planning reads A's rows where SuiteSparse holds them (kernels/lend.py's csr), not a scipy copy
of them: the arrays are lent while one product's candidates are lowered and given back after.
Results equal dense numpy with GraphBLAS semantics for every plan, on rank 0's path and SPMD;
the caller's matrix is left as it was; matrices that cannot be lent (by column, hypersparse,
iso-valued, another dtype) are copied as before."""
from __future__ import annotations

import graphblas as gb
import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.errors import DsplaError
from dspla.instr.layout import DimPart
from dspla.kernels import lend
from dspla.plan.options import Options
from dspla.plan.plans import plan_names
from dspla.runtime.comm.sim import run_simulated
from dspla.session import DistSession
from dspla.values import Array, Dist


def _graph(n=90, seed=0):
    rng = np.random.default_rng(seed)
    A = sp.random_array((n, n), density=0.06, rng=rng, format="csr")
    A.data[:] = rng.integers(1, 9, A.nnz)
    A = sp.csr_array(sp.diags_array((np.arange(n) % 11 != 3).astype(float)) @ A)   # empty rows
    A.eliminate_zeros()   # (a scipy product: each row's columns not in order, as SuiteSparse may hold them)
    return A, rng.integers(-4, 9, (n, 3)).astype(float)


def _oracle(A, X):
    Ad = A.toarray()
    want = Ad @ X
    want[(Ad != 0).sum(axis=1) == 0] = np.nan   # an empty row of A: a missing row
    return want


def test_the_arrays_are_lent_and_given_back():
    S, _ = _graph()
    M = gb.io.from_scipy_sparse(S)
    S.sort_indices()   # lent sorted: SuiteSparse orders each row's columns first
    with lend.csr(M) as got:
        indptr, indices, values = got
        assert np.array_equal(indptr, S.indptr) and np.array_equal(indices, S.indices)
        assert np.array_equal(values, S.data) and M.nvals == 0   # (M reads as empty meanwhile)
        with pytest.raises(ValueError, match="read-only"):
            values[0] = 1.0
    assert M.isequal(gb.io.from_scipy_sparse(S)) and M.ss.format == "csr"


@pytest.mark.parametrize("make", ["by column", "hypersparse", "iso"])
def test_what_cannot_be_lent_is_declined_and_untouched(make):
    S, _ = _graph()
    if make == "iso":
        S.data[:] = 1.0
    M = gb.io.from_scipy_sparse(S)
    if make == "by column":
        M.ss.config["format"] = "by_col"
    if make == "hypersparse":
        M.ss.config["sparsity_control"] = ["hypersparse"]
    before = (M.ss.format, M.nvals)
    with lend.csr(M) as got:
        assert got is None and M.nvals == before[1]
    assert (M.ss.format, M.nvals) == before


@pytest.mark.parametrize("P", [2, 3])
@pytest.mark.parametrize("plan", ["auto", *plan_names(general=True)])
@pytest.mark.parametrize("held", ["by row", "by column", "iso"])
def test_every_plan_plans_from_lent_rows_and_equals_the_oracle(P, plan, held):
    A, X = _graph(seed=P)
    if held == "iso":
        A.data[:] = 1.0
    want = _oracle(A, X)
    a, x = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    f = dp.function({"Y": a @ x, "Z": a @ (a @ x)})   # two products on one A: lent, given back, lent again
    G = gb.io.from_scipy_sparse(A)
    if held == "by column":   # (the same values, held by column)
        G.ss.config["format"] = "by_col"
    keep = G.dup()

    def body(comm):
        s = DistSession(f.compiled, comm, Options(plan=plan, partition="random", seed=1))
        out = s.run({"A": G, "X": X} if comm.rank == 0 else None)
        return {k: v.to_numpy(fill=np.nan) for k, v in out.items()}
    if plan == "2d":   # (P = 2 and 3 are not square: asked for, 2d is refused, not replaced)
        with pytest.raises(DsplaError, match="2d needs a square process count"):
            run_simulated(P, body, timeout=120)
        return
    for got in run_simulated(P, body, timeout=120):
        np.testing.assert_allclose(got["Y"], want, rtol=1e-12)
    assert G.isequal(keep)   # the caller's matrix, as it was


@pytest.mark.parametrize("plan", ["p2p1d", "auto"])
def test_spmd_planning_reads_its_rows_in_place(plan):
    A, X = _graph(seed=7)
    want = _oracle(A, X)
    P = 3
    parts = np.random.default_rng(3).integers(0, P, A.shape[0])
    part_of = DimPart("n", parts, P, "test")
    a, x = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "k"))
    f = dp.function({"Y": a @ x})

    def body(comm):
        rows = part_of.owned[comm.rank]
        dist = Dist("row", "n", part_of, comm)
        Ga = gb.io.from_scipy_sparse(A[rows])
        keep = Ga.dup()
        ins = {"A": Array(Ga, "A", dist, A.shape), "X": Array(gb.Matrix.from_dense(X[rows]), "X", dist, X.shape)}
        out = DistSession(f.compiled, comm, Options(plan=plan)).run(ins)
        assert Ga.isequal(keep) and Ga.ss.format == "csr"
        return out["Y"].to_numpy(fill=np.nan)
    for got in run_simulated(P, body, timeout=120):
        np.testing.assert_allclose(got, want, rtol=1e-12)
