"""Running a Function on P simulated ranks and comparing with the single-process reference."""
from __future__ import annotations

import numpy as np

from dspla.plan.options import Options
from dspla.runtime.comm.sim import run_simulated
from dspla.session import DistSession
from dspla.values import Array


def run_dist(f, inputs: dict, P: int, repeat: int = 1, **options):
    """(outputs gathered whole on rank 0, stats) of f on P simulated ranks; inputs given on
    rank 0 only. Every rank gets distributed results; gathering them is a collective."""
    def body(comm):
        s = DistSession(f.compiled, comm, Options(**options))
        out = s.run(inputs if comm.rank == 0 else None, repeat=repeat)
        return gather(out), s.last_stats
    return run_simulated(P, body, timeout=120)[0]


def gather(out: dict) -> dict:
    """Distributed results as whole Arrays (every rank calls this)."""
    return {k: Array(v.to_graphblas(), k) for k, v in out.items()}


def assert_same(got: dict, want: dict, exact: bool):
    """Same present entries; values equal (exactly, or within 1e-12 relative for floats)."""
    assert set(got) == set(want)
    for k in want:
        g, w = got[k], want[k]
        assert g.shape == w.shape, k
        gp, wp = g.present(), w.present()
        assert np.array_equal(gp, wp), f"{k}: present entries differ ({gp.sum()} vs {wp.sum()})"
        gv, wv = g.to_numpy(fill=0), w.to_numpy(fill=0)
        if exact or gv.dtype.kind in "biu":
            assert np.array_equal(gv[wp], wv[wp]), f"{k}: values differ"
        else:
            np.testing.assert_allclose(gv[wp], wv[wp], rtol=1e-12, atol=1e-300, err_msg=k)


def central_differences(loss, W: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d loss / d W by central differences, entry by entry (``loss``: array of W's shape -> float)."""
    num = np.zeros_like(W)
    for i in np.ndindex(W.shape):
        Wp, Wm = W.copy(), W.copy()
        Wp[i] += eps
        Wm[i] -= eps
        num[i] = (loss(Wp) - loss(Wm)) / (2 * eps)
    return num


def product_oracle(S: np.ndarray, w: np.ndarray, present: np.ndarray, semiring: str):
    """(values, present) of S ⊕.⊗ w in dense numpy with GraphBLAS semantics: only pairs of an
    entry of S and a present entry of w take part (plus_times or min_plus)."""
    pairs = (S != 0)[:, :, None] & present[None, :, :]
    if semiring == "plus_times":
        vals = np.where(pairs, S[:, :, None] * w[None, :, :], 0.0).sum(axis=1)
    else:   # min_plus
        vals = np.where(pairs, S[:, :, None] + w[None, :, :], np.inf).min(axis=1)
    return vals, pairs.any(axis=1)


def check_present(got: np.ndarray, vals: np.ndarray, present: np.ndarray):
    """``got`` (missing entries NaN) has exactly ``present``'s entries, with ``vals`` there."""
    assert np.array_equal(~np.isnan(got), present)
    np.testing.assert_allclose(got[present], vals[present], rtol=1e-13)
