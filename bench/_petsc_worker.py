"""PETSc's side of ``dspla bench peers``: one MATMPIAIJ times MATMPIDENSE product, timed.

Run by bench/peers.py as ``mpiexec -n P python3 -I bench/_petsc_worker.py DATA OUT ROUNDS``
with the *system* Python that has petsc4py (Debian's python3-petsc4py, Open MPI). It imports
only numpy and petsc4py: neither dspla nor anything else of this project (that Python lacks
their dependencies), so it stays a self-contained file.

DATA (an .npz written by the parent) holds the matrix as CSR (``n``, ``indptr``, ``indices``,
``data``), the dense inputs ``X_<K>`` (n x K) and, per process count, the first row of every
rank's contiguous block (``starts_P<P>``, P + 1 entries): the parent takes them from dspla's own
``block`` partition, so both sides own the same rows. Every rank builds its rows of A (its block
of columns is the same block: the column layout matches X's rows) and of X, then times
``A.matMult(X, C)``: the first call creates C (symbolic and numeric phases, not timed), every
later one reuses it (MAT_REUSE_MATRIX). The Ks are timed in alternation, ROUNDS rounds after
an untimed one, a barrier before each product. Each rank writes ``OUT.<rank>.json``: its seconds per K per round,
its rows' sum of squares of C and C at the sample rows it owns (``samples`` in DATA), for the
parent's agreement check; the parent takes the slowest rank of every round.
"""
from __future__ import annotations

import json
import sys
import time

import numpy as np


def main(argv: list) -> int:
    data, out, rounds = argv[0], argv[1], int(argv[2])
    from petsc4py import PETSc

    comm = PETSc.COMM_WORLD
    rank, P = comm.getRank(), comm.getSize()
    d = np.load(data)
    n = int(d["n"])
    starts = d[f"starts_P{P}"]
    lo, hi = int(starts[rank]), int(starts[rank + 1])
    m = hi - lo
    indptr = d["indptr"]
    a, b = int(indptr[lo]), int(indptr[hi])
    ip = (indptr[lo:hi + 1] - a).astype(PETSc.IntType)
    cols = d["indices"][a:b].astype(PETSc.IntType)
    vals = np.ascontiguousarray(d["data"][a:b], dtype=PETSc.ScalarType)
    A = PETSc.Mat().createAIJ(size=((m, n), (m, n)), csr=(ip, cols, vals), comm=comm)
    A.assemble()
    Ks = [int(k) for k in d["Ks"]]
    samples = [int(i) for i in d["samples"] if lo <= i < hi]
    X, C = {}, {}
    for K in Ks:
        Xk = PETSc.Mat().createDense(size=((m, n), (None, K)), comm=comm)
        Xk.setUp()
        Xk.getDenseArray()[:, :] = d[f"X_{K}"][lo:hi]
        Xk.assemble()
        X[K] = Xk
        C[K] = A.matMult(Xk)          # MAT_INITIAL_MATRIX: creates C (warm-up, not timed)
        A.matMult(Xk, C[K])           # one reuse call untimed too
    times = {K: [] for K in Ks}
    for r in range(rounds + 1):       # round 0: warm-up
        for K in Ks:
            comm.barrier()
            t0 = time.perf_counter()
            A.matMult(X[K], C[K])     # MAT_REUSE_MATRIX
            if r:
                times[K].append(time.perf_counter() - t0)
    res = {"rank": rank, "P": P, "rows": [lo, hi], "petsc": ".".join(map(str, PETSc.Sys.getVersion())),
           "seconds": {str(K): v for K, v in times.items()}, "sumsq": {}, "samples": {}}
    for K in Ks:
        Cl = np.array(C[K].getDenseArray(readonly=True))   # this rank's rows, m x K
        res["sumsq"][str(K)] = float(np.sum(Cl * Cl))
        res["samples"][str(K)] = {str(i): Cl[i - lo].tolist() for i in samples}
    with open(f"{out}.{rank}.json", "w") as fh:
        json.dump(res, fh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
