"""Writing program results: every output NAME as COO arrays NAME.rows, NAME.cols (int64),
NAME.values and NAME.shape holding exactly the present entries, plus NAME as a dense array when
every entry is present."""
from __future__ import annotations

import os

import numpy as np


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
    tmp = path + ".tmp.npz"  # write then rename: never a half-written result file
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    os.replace(tmp, path)
