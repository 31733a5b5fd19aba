"""Issue 2's performance bar: ``f(A=..., X=...)`` for ``A @ X`` through the DSL against a direct
python-graphblas ``A.mxm(X)`` on the same data, for a 1M-nonzero A and K in {16, 64, 256}.

Two settings: inputs already GraphBLAS matrices (the DSL's own overhead), and inputs as
scipy/numpy (both sides convert). Median of 5 after one warm-up, interleaved. Bar: ratio <= 1.10.
"""
from __future__ import annotations

import argparse

import graphblas as gb
import numpy as np
import scipy.sparse as sp

import dspla as dp

from .common import git_commit, interleaved_medians


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="dspla bench local")
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--nnz", type=int, default=1_000_000)
    ap.add_argument("--K", default="16,64,256")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    n = args.n
    A = sp.csr_array((rng.random(args.nnz), (rng.integers(0, n, args.nnz), rng.integers(0, n, args.nnz))),
                     shape=(n, n))
    A.sum_duplicates()
    a = dp.sparse("A", ("n", "n"))
    x = dp.dense("X", ("n", "k"))
    f = dp.function(outputs={"C": a @ x})  # the one-off compile, excluded from timing
    Agb = gb.io.from_scipy_sparse(A)
    print(f"commit {git_commit()}: A {n}x{n} with {A.nnz} nonzeros; median of {args.repeat} after 1 warm-up")
    print(f"{'K':>5} {'inputs':>14} {'direct s':>10} {'dspla s':>10} {'ratio':>7}")
    worst = 0.0
    for K in map(int, args.K.split(",")):
        X = rng.random((n, K))
        Xgb = gb.Matrix.from_dense(X)
        cases = {
            "graphblas": ({"direct": lambda: Agb.mxm(Xgb, gb.semiring.plus_times).new(),
                           "dspla": lambda: f(A=Agb, X=Xgb)}),
            "scipy/numpy": ({"direct": lambda: gb.io.from_scipy_sparse(A).mxm(gb.Matrix.from_dense(X),
                                                                               gb.semiring.plus_times).new(),
                             "dspla": lambda: f(A=A, X=X)}),
        }
        for label, fns in cases.items():
            t = interleaved_medians(fns, repeat=args.repeat)
            ratio = t["dspla"] / t["direct"]
            worst = max(worst, ratio)
            print(f"{K:>5} {label:>14} {t['direct']:>10.4f} {t['dspla']:>10.4f} {ratio:>7.3f}")
    print(f"worst ratio {worst:.3f} (bar: <= 1.10) -> {'met' if worst <= 1.10 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
