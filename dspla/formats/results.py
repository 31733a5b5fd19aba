"""Program results in one .npz (``dspla run --out``), each output stored once, as its present
entries: ``NAME.rows``, ``NAME.cols`` (int64), ``NAME.values`` (explicit zeros included) and
``NAME.shape``. This layout is the one scripts and checks outside the package read, so it is
the same for full outputs (no second, dense copy). ``read_results`` gives (values, present)
pairs back and also reads an older file holding a full output as a dense ``NAME``.
"""
from __future__ import annotations

import numpy as np

from ..errors import DataFormatError
from .files import atomic_write


def write_results(path: str, results: dict) -> None:
    arrays = {}
    for name, arr in results.items():
        r, c, v = arr.to_coo()
        arrays[f"{name}.rows"] = r
        arrays[f"{name}.cols"] = c
        arrays[f"{name}.values"] = v
        arrays[f"{name}.shape"] = np.array(arr.shape, dtype=np.int64)
    with atomic_write(path) as f:  # never a half-written result file, nor a stray temporary one
        np.savez(f, **arrays)


def read_results(path: str) -> dict:
    """{name: (values, present)} dense numpy pairs of a results file, for either layout."""
    with np.load(path, allow_pickle=False) as z:
        files = set(z.files)
        out = {}
        for key in sorted(files):
            if "." not in key:
                vals = z[key]
                out[key] = (vals, np.ones(vals.shape, dtype=bool))
            elif key.endswith(".shape"):
                name = key[: -len(".shape")]
                if not {f"{name}.rows", f"{name}.cols", f"{name}.values"} <= files:
                    raise DataFormatError(path, f"output {name!r} lacks its rows, cols or values")
                shape = tuple(int(s) for s in z[key])
                vals, pres = np.zeros(shape, dtype=z[f"{name}.values"].dtype), np.zeros(shape, dtype=bool)
                vals[z[f"{name}.rows"], z[f"{name}.cols"]] = z[f"{name}.values"]
                pres[z[f"{name}.rows"], z[f"{name}.cols"]] = True
                out[name] = (vals, pres)
        return out
