"""The GraphBLAS operations' meaning in dense numpy, written from the C API's text, and how the
tests of dspla/ops run a program at P = 1..4. A value is (values, present): two dense arrays of
one shape; where present is False the entry is missing (a missing entry is not a zero). Nothing
here computes with dspla or python-graphblas."""
from __future__ import annotations

import zlib

import numpy as np
import scipy.sparse as sp

from dspla.plan.options import Options
from dspla.runtime.comm.sim import run_simulated
from dspla.session import DistSession

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"]


def rng_for(*case) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(case).encode()))


def rand(rng, shape, dtype="float64", density=0.5, full=False):
    """(values, present): small exact values (ints 0..5 for unsigned, -4..4 else; floats k/4)."""
    dt = np.dtype(dtype)
    present = np.ones(shape, bool) if full else rng.random(shape) < density
    if dt.kind == "b":
        vals = rng.random(shape) < 0.5
    elif dt.kind == "u":
        vals = rng.integers(0, 6, size=shape).astype(dt)
    elif dt.kind == "i":
        vals = rng.integers(-4, 5, size=shape).astype(dt)
    else:
        vals = (rng.integers(-8, 9, size=shape) / 4).astype(dt)
    return np.where(present, vals, np.zeros((), dt)), present


def to_sparse(x):
    """A scipy CSR holding exactly the present entries (explicit zeros stay)."""
    vals, pres = x
    r, c = np.nonzero(pres)
    return sp.csr_array((vals[r, c], (r, c)), shape=vals.shape)


def masked(new, old, mask, complement=False, structure=False, replace=False):
    """C<M, replace> = new: where the mask holds, new; elsewhere old (nothing with replace)."""
    mv, mp = mask
    m = mp if structure else mp & (mv != 0)   # (cast to bool: -0.0 does not hold, NaN does)
    if complement:
        m = ~m
    keep_v = np.where(m, new[0], old[0])
    keep_p = np.where(m, new[1], old[1] & (not replace))
    return keep_v, keep_p


def accumulate(old, new, op):
    """Z = old accum= new: op where both are present, either alone elsewhere."""
    (ov, op_), (nv, np_) = old, new
    both = op_ & np_
    vals = np.where(np_, nv, ov)
    vals = np.where(both, op(ov, nv), vals)
    return vals.astype(ov.dtype), op_ | np_


def run(f, inputs: dict, P: int, **options) -> dict:
    """name -> (values, present, shape as presented) of f's outputs on P processes (P = 1: the
    one-process run and the reference executor, which must agree)."""
    if P == 1:
        out = {k: _dense(v) for k, v in f(**inputs).items()}
        ref = {k: _dense(v) for k, v in f._reference(inputs).items()}
        for k in out:
            assert same(out[k], ref[k]), f"{k}: one process and the reference executor differ"
        return out

    def body(comm):
        s = DistSession(f.compiled, comm, Options(**{"partition": "random", **options}))
        got = s.run(inputs if comm.rank == 0 else None)
        return {k: (v.to_graphblas(), v.form) for k, v in got.items()}, s.last_stats
    outs, stats = run_simulated(P, body, timeout=120)[0]
    return {k: _dense_gb(M, form) for k, (M, form) in outs.items()}


def _dense(a):
    return _dense_gb(a.to_graphblas(), a.form)


def _dense_gb(M, form):
    r, c, v = M.to_coo()
    vals = np.zeros(M.shape, dtype=M.dtype.np_type)
    pres = np.zeros(M.shape, dtype=bool)
    vals[r, c], pres[r, c] = v, True
    shape = {"matrix": M.shape, "vector": (M.shape[0],), "scalar": ()}[form]
    return vals, pres, shape


def same(got, want) -> bool:
    gv, gp = got[0], got[1]
    wv, wp = want[0], want[1]
    if gv.shape != wv.shape or not np.array_equal(gp, wp):
        return False
    if gv.dtype.kind == "f" or wv.dtype.kind == "f":
        return np.allclose(gv[wp].astype(float), wv[wp].astype(float), rtol=1e-6, atol=1e-12, equal_nan=True)
    return np.array_equal(gv[wp], wv[wp])


def check(got, want, what=""):
    """``want``: (values, present[, shape presented]); dtype compared when values have one."""
    assert got[0].shape == want[0].shape, f"{what}: shape {got[0].shape} != {want[0].shape}"
    if len(want) > 2:
        assert got[2] == want[2], f"{what}: presented as {got[2]}, want {want[2]}"
    assert np.array_equal(got[1], want[1]), f"{what}: present entries differ\n{got[1]}\n{want[1]}"
    assert got[0].dtype == want[0].dtype, f"{what}: dtype {got[0].dtype} != {want[0].dtype}"
    assert same(got, want), f"{what}: values differ\n{np.where(got[1], got[0], 0)}\n{np.where(want[1], want[0], 0)}"
