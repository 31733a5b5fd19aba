"""MatrixMarket reader (stopgap through scipy; to be replaced by the vectorised loader)."""
from __future__ import annotations

import scipy.io
import scipy.sparse as sp

from ..errors import DataFormatError


def load_mtx(path: str):
    try:
        m = scipy.io.mmread(path)
    except Exception as e:  # noqa: BLE001 - any parse failure is a data error
        raise DataFormatError(path, f"not a valid MatrixMarket file ({e})") from None
    return sp.csr_array(m) if sp.issparse(m) else m
