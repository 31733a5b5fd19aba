"""Program results in one .npz (``dspla run --out``), each output stored once:

- an output with every entry present as a plain array ``NAME`` (``np.load(F)["NAME"]``): 2-D for
  a matrix (an n x 1 result is n x 1); a vector would be 1-D and a scalar 0-D;
- an output with missing entries as its present entries: ``NAME.rows``, ``NAME.cols`` (int64,
  0-based), ``NAME.values`` (explicit zeros included) and ``NAME.shape``;
- when the rows (columns) of an output are a graph's nodes read with their original ids (an
  edge list, a networkx graph), those ids: ``NAME.ids`` (``NAME.col_ids``), the id of row k at
  position k; rows and columns stay positions (0..n-1) in the arrays above.

``read_results`` reads both layouts, and files written before ids and plain arrays existed.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import DataFormatError, say_warning
from .files import atomic_write

COO_PARTS = ("rows", "cols", "values", "shape")
ID_PARTS = ("ids", "col_ids")


def write_results(path: str, results: dict) -> None:
    """Write ``{name: Array}`` (whole values, this process holding all of each) to ``path``."""
    arrays: dict[str, NDArray[Any]] = {}
    for name, arr in results.items():
        if arr.nvals == arr.shape[0] * arr.shape[1]:
            arrays[name] = arr.to_numpy()
        else:
            r, c, v = arr.to_coo()
            arrays[f"{name}.rows"] = r
            arrays[f"{name}.cols"] = c
            arrays[f"{name}.values"] = v
            arrays[f"{name}.shape"] = np.array(arr.shape, dtype=np.int64)
        for part in ID_PARTS:
            ids = getattr(arr, part, None)
            if ids is None:
                continue
            if ids.dtype.kind == "O":
                say_warning(f"{path}: the node ids of {name} are Python objects (not numbers or strings): not "
                            "stored; its rows are positions")
                continue
            arrays[f"{name}.{part}"] = ids
    with atomic_write(path) as f:  # never a half-written result file, nor a stray temporary one
        np.savez(f, **arrays)


class Result(tuple):
    """One output read back: ``(values, present)`` dense numpy arrays (unpack it as a pair; a
    missing entry's value is 0), and ``ids`` / ``col_ids``, the original node ids of its rows /
    columns (None when they are positions)."""

    ids: NDArray[Any] | None
    col_ids: NDArray[Any] | None

    def __new__(cls, values: NDArray[Any], present: NDArray[np.bool_], ids: NDArray[Any] | None = None,
                col_ids: NDArray[Any] | None = None) -> "Result":
        self = super().__new__(cls, (values, present))
        self.ids, self.col_ids = ids, col_ids
        return self

    @property
    def values(self) -> NDArray[Any]:
        return self[0]

    @property
    def present(self) -> NDArray[np.bool_]:
        return self[1]


def read_results(path: str) -> dict[str, Result]:
    """{name: Result} of a results file, in either layout (a plain array, or present entries)."""
    with np.load(path, allow_pickle=False) as z:
        files = set(z.files)
        out = {}
        for key in sorted(files):
            if "." not in key:
                vals = z[key]
                out[key] = Result(vals, np.ones(vals.shape, dtype=bool))
            elif key.endswith(".shape"):
                name = key[: -len(".shape")]
                if not {f"{name}.rows", f"{name}.cols", f"{name}.values"} <= files:
                    raise DataFormatError(path, f"output {name!r} lacks its rows, cols or values")
                shape = tuple(int(s) for s in z[key])
                vals, pres = np.zeros(shape, dtype=z[f"{name}.values"].dtype), np.zeros(shape, dtype=bool)
                vals[z[f"{name}.rows"], z[f"{name}.cols"]] = z[f"{name}.values"]
                pres[z[f"{name}.rows"], z[f"{name}.cols"]] = True
                out[name] = Result(vals, pres)
            elif key.rpartition(".")[2] not in COO_PARTS + ID_PARTS:
                raise DataFormatError(path, f"{key!r} is no part of a results file (NAME, or NAME.rows/.cols/"
                                      ".values/.shape/.ids/.col_ids)")
        for name, res in out.items():
            res.ids = z[f"{name}.ids"] if f"{name}.ids" in files else None
            res.col_ids = z[f"{name}.col_ids"] if f"{name}.col_ids" in files else None
        return out
