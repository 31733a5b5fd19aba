"""Arrays from .npz files: a named dense array, or a scipy sparse save."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError, DsplaError


def load_npz(path: str, key: str | None = None):
    try:
        with np.load(path, allow_pickle=False) as z:
            names = list(z.files)
            if key is None:
                if "format" in names and "indptr" in names:
                    return sp.load_npz(path).tocsr()
                if len(names) == 1:
                    return z[names[0]]
                raise DsplaError(f"{path} holds {len(names)} arrays ({', '.join(names)}); "
                                 f"name one: {path}:{names[0]}")
            if key not in names:
                raise DsplaError(f"{path} has no array {key!r}; it has: {', '.join(names)}")
            return z[key]
    except (ValueError, OSError) as e:
        raise DataFormatError(path, f"not a readable .npz ({e})") from None
