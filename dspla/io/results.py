"""Writing program results: every output NAME as COO arrays NAME.rows, NAME.cols (int64),
NAME.values and NAME.shape holding exactly the present entries, plus NAME as a dense array when
every entry is present."""
from __future__ import annotations

import numpy as np

from .files import atomic_write


def write_results(path: str, results: dict) -> None:
    arrays = {}
    for name, arr in results.items():
        r, c, v = arr.to_coo()
        arrays[f"{name}.rows"] = r
        arrays[f"{name}.cols"] = c
        arrays[f"{name}.values"] = v
        arrays[f"{name}.shape"] = np.array(arr.shape, dtype=np.int64)
        if arr.is_full:
            arrays[name] = arr.to_numpy()
    with atomic_write(path) as f:  # never a half-written result file, nor a stray temporary one
        np.savez(f, **arrays)
