"""Seeded random operands for the golden tests, their conversion to dspla inputs, and the
comparison of a dspla result with the oracle's expectation.

Operands are oracle ``Mat``s. Values are small and exactly representable (floats are
multiples of 1/4 in [-2, 2], ints in [-4, 4]) so sums and products are exact; about a fifth
of the present entries are explicit zeros (present, value 0). A density spec says how
entries are laid out:

- ``empty``:  no entries at all (an all-missing operand);
- ``sparse``: ~35% present, and (when the matrix has more than two rows/columns) one whole
  row and one whole column without entries;
- ``half``:   ~60% present;
- ``full``:   every entry present (may be declared and passed as a dense input).
"""
from __future__ import annotations

import zlib

import graphblas as gb  # only to pass inputs in GraphBLAS form; never to compute expectations
import numpy as np
import scipy.sparse as sp

from . import oracle
from .oracle import BOOL, DTYPES, F32, F64, I64, Mat

DENSITY = {"empty": 0.0, "sparse": 0.35, "half": 0.6, "full": 1.0}


def seed_of(case_id: str) -> int:
    return zlib.crc32(case_id.encode())


def random_values(rng: np.random.Generator, shape, dtype: np.dtype) -> np.ndarray:
    if dtype == BOOL:
        return rng.random(shape) < 0.5
    if dtype == I64:
        return rng.integers(-4, 5, size=shape).astype(I64)
    return (rng.integers(-8, 9, size=shape) / 4).astype(dtype)


def random_mat(rng: np.random.Generator, shape, dtype, density: str = "half", *, zeros: bool = True,
               positive: bool = False) -> Mat:
    dtype = np.dtype(dtype)
    n, m = shape
    present = rng.random(shape) < DENSITY[density]
    if density == "full":
        present[:] = True
    if density == "sparse":
        if n > 2:
            present[rng.integers(n), :] = False
        if m > 2:
            present[:, rng.integers(m)] = False
    values = random_values(rng, shape, dtype)
    if positive and dtype != BOOL:
        values = np.abs(values) + np.ones((), dtype)
    elif zeros and dtype != BOOL:
        values = np.where(rng.random(shape) < 0.2, np.zeros((), dtype), values)
    elif zeros:  # explicit False entries
        values = values & (rng.random(shape) >= 0.2)
    return Mat(values, present)


def to_scipy(X: Mat):
    """A CSR matrix holding exactly the present entries (explicit zeros stay stored)."""
    rows, cols = np.nonzero(X.present)
    data = X.values[rows, cols]
    n, m = X.shape
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, rows + 1, 1)
    indptr = np.cumsum(indptr)
    A = sp.csr_array((data, cols.astype(np.int64), indptr), shape=(n, m))
    assert A.nnz == X.present.sum()  # nothing was eliminated
    return A


def to_graphblas(X: Mat):
    rows, cols = np.nonzero(X.present)
    n, m = X.shape
    dtype = {F64: "FP64", F32: "FP32", I64: "INT64", BOOL: "BOOL"}[X.dtype]
    return gb.Matrix.from_coo(rows.astype(np.uint64), cols.astype(np.uint64), X.values[rows, cols],
                              nrows=n, ncols=m, dtype=dtype)


def to_input(X: Mat, kind: str, via: str = "scipy"):
    """The value a caller passes for an input declared ``kind``."""
    if kind == "dense":
        assert X.present.all(), "a dense input has every entry present"
        return X.values.copy()
    return to_graphblas(X) if via == "gb" else to_scipy(X)


def check(result, expected: Mat, what: str = "") -> None:
    """Assert that a dspla Array has the expected shape, dtype, present set and values."""
    assert tuple(result.shape) == expected.shape, f"{what}: shape {result.shape} != {expected.shape}"
    rows, cols, vals = result.to_coo()
    present = np.zeros(result.shape, dtype=bool)
    present[rows, cols] = True
    assert len(rows) == present.sum(), f"{what}: duplicate entries in the result"
    problems = oracle.compare(present, rows, cols, vals, result.dtype, expected)
    if problems:
        got = Mat(np.zeros(result.shape, np.asarray(vals).dtype), present)
        got.values[rows, cols] = vals
        raise AssertionError(f"{what}:\n  " + "\n  ".join(problems) + f"\nexpected {expected!r}\ngot {got!r}")


__all__ = ["DENSITY", "DTYPES", "check", "random_mat", "seed_of", "to_input", "to_scipy", "to_graphblas"]
