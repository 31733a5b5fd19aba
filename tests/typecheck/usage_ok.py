"""A user's script, written against dspla's public API with full annotations.

mypy checks it at --strict level (``make check``; the ``usage_ok`` override in pyproject.toml),
so the public hints must let a typed program through without casts; the mistakes at the bottom
must each be caught (every ``# type: ignore[code]`` there is needed: warn_unused_ignores reports
one that is not). tests/test_typing.py also runs it, so it is a program that works.
"""
from __future__ import annotations

import os
import tempfile
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

import dspla as dp


def gcn_layer() -> dp.Function:
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "k"))
    W = dp.param("W", ("k", "c"))
    deg = dp.reduce_rows(A, dp.monoid.plus)
    An = A * (deg ** -1)                                  # a scalar binds to the operator
    H = dp.relu(An @ X @ W)
    loss = dp.reduce_all(H * H)
    dW = dp.grad(loss, W)                                 # one parameter: one gradient
    dX, dW2 = dp.grad(loss, X, W)                         # several: a tuple
    S = dp.mxm(A, X, dp.semiring.min_plus, mask=A @ X, structure=True)
    big = dp.select(H, ">", 0.5)
    full = dp.ewise_add(H, dp.full(H, 0.0))
    return dp.function({"H": H, "dW": dW, "dX": dX, "dW2": dW2, "S": S, "big": big, "full": full,
                        "pos": H > 0, "T": H.T})


def doubling() -> dp.Function:
    x0 = dp.vector("x0", "n")
    (x,), steps = dp.while_loop(lambda x: dp.reduce_all(x) < 100.0, lambda x: x * 2.0, (x0,), 20, count=True)
    named = dp.while_loop(lambda v: dp.reduce_all(v) < 10.0, lambda v: v + 1.0, {"v": x0}, "n")
    return dp.function([x, steps, named["v"]], inputs=[x0])


def user_operators() -> dp.Function:
    dp.semiring.define("typed_tropical", monoid="min", op="plus")
    dp.binary.define("typed_hinge", lambda x, y: max(x - y, 0.0))
    A, B = dp.sparse("A", ("n", "n")), dp.sparse("B", ("n", "n"))
    return dp.function(dp.ewise_mult(dp.mxm(A, B, "typed_tropical"), B, "typed_hinge"))


def main() -> None:
    dp.quiet()
    rng = np.random.default_rng(0)
    n = 40
    a = sp.random_array((n, n), density=0.1, format="csr", random_state=0) + sp.eye_array(n, format="csr")
    x: NDArray[np.float64] = rng.random((n, 4))
    w = rng.random((4, 4))

    f = gcn_layer().configure(seed=1, plan="auto")
    out: dict[str, dp.Array] = f(A=a, X=x, W=w)
    H = out["H"]
    dense: NDArray[Any] = H.to_numpy()
    rows, cols, vals = out["S"].to_coo()
    where: NDArray[np.bool_] = out["big"].present()
    nvals: int = out["S"].nvals
    shape: tuple[int, ...] = H.shape   # (n,) for a vector, () for a scalar
    print(f, dense.shape, rows.dtype, cols.size, vals.size, int(where.sum()), nvals, shape, H.dtype)
    print(out["S"].to_numpy(fill=np.inf).min(), out["full"].is_full, H.local.index[:3])
    print(out["S"].to_scipy("csc").nnz, out["dW"].to_graphblas().nvals, H.distributed, repr(H))

    again = f.run({"A": a, "X": H, "W": w}, progress=False)["H"]   # a result passed back as an input
    np.testing.assert_allclose(again.to_numpy(), f(A=a, X=dense, W=w)["H"].to_numpy())
    text: str = f.explain()
    plan: dict[str, Any] = f.explain(2, json=True, A=a, X=x, W=w)
    print(len(text), sorted(plan)[:3], f.input_names, f.output_names, f.params)
    stats = f.last_stats                                  # rank 0's (None elsewhere, and before a run)
    if stats is not None:
        fig = dp.plot.stats(stats)
        path = os.path.join(tempfile.mkdtemp(), "stats.png")
        print(stats["plan"], dp.plot.save(fig, path), os.path.getsize(path) > 0)

    loop = doubling()(x0=np.ones((5, 1)))
    print(loop["out0"].to_numpy().ravel(), loop["out1"].to_numpy(), loop["out2"].to_numpy().ravel())

    b = sp.random_array((n, n), density=0.2, format="csr", random_state=1)
    print(user_operators()(A=a, B=b)["out"].nvals)

    comm = dp.world()                                     # None under plain python
    if comm is not None:
        comm.barrier()
        total: int = sum(comm.allgather(1))
        print(comm.rank, comm.size, total)
    try:
        dp.function({"bad": dp.sparse("A", (3, 3)) @ dp.dense("X", (4, 1))})
    except dp.DimensionMismatch as e:
        message: str = e.message
        print(message.splitlines()[0])


def from_shards(folder: str) -> dict[str, dp.Array]:
    """Typed, not run (it needs a shard set)."""
    return dp.load_shards(folder, partition="block", names=["A", "X"])


def mistakes(A: dp.Expr, f: dp.Function) -> None:
    """Not run: each line is an error mypy must report (the ignore names it)."""
    dp.mxm(A, 3.0)                                        # type: ignore[arg-type]
    dp.relu(np.ones(3))                                   # type: ignore[arg-type]
    dp.reduce(A, axis="diagonal")                         # type: ignore[arg-type]
    dp.sparse("A", ("n", "n"), kind="dense")              # type: ignore[call-arg]
    dp.declare("A", "csr", ("n", "n"))                    # type: ignore[arg-type]
    f.configure(plann="p2p1d")                            # type: ignore[call-arg]
    f.run(None, repeat="twice")                           # type: ignore[call-overload]
    dp.semiring.define("s", "min", "plus", identity="zero")   # type: ignore[arg-type]
    dp.load_shards("folder", partition="metis")           # type: ignore[arg-type]
    n: str = f(A=1.0)["out"].nvals                        # type: ignore[assignment]
    t: int = f.explain()                                  # type: ignore[assignment]
    dp.grad(A)                                            # type: ignore[call-overload]
    print(n, t)


if __name__ == "__main__":
    main()
