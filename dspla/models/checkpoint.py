"""Training checkpoints: one ``.npz`` of plain arrays (no pickled objects; loaded with
``allow_pickle=False``), metadata as JSON inside it. Written atomically: to a temporary file in
the same directory, flushed and fsynced, then ``os.replace``d over the old one, so a crash at any
moment leaves either the previous checkpoint or the new one, never half of one."""
from __future__ import annotations

import json
import os

import numpy as np

from ..errors import DsplaError
from ..formats.files import atomic_write, jsonable
from ..formats.npy import check_npz_members

FILE = "checkpoint.npz"


def save(directory: str, meta: dict, arrays: dict) -> str:
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, FILE)
    payload = {f"a/{k}": np.asarray(v) for k, v in arrays.items()}
    payload["meta"] = np.frombuffer(json.dumps(meta, default=jsonable).encode(), dtype=np.uint8)
    with atomic_write(path, durable=True) as fh:   # temporary file, fsync, rename, fsync the folder
        np.savez(fh, **payload)
    return path


def load(directory: str) -> tuple[dict, dict] | None:
    """(meta, arrays) of the checkpoint in ``directory``, or None if there is none."""
    path = os.path.join(directory, FILE)
    if not os.path.exists(path):
        return None
    try:
        check_npz_members(path)   # a damaged member header must not make it allocate
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(bytes(z["meta"]).decode())
            arrays = {k[2:]: z[k] for k in z.files if k.startswith("a/")}
    except Exception as e:  # noqa: BLE001 - any unreadable file is reported the same way
        raise DsplaError(f"cannot read checkpoint {path}: {e}") from None
    return meta, arrays
