"""NaN and infinite values in data files: refused with the first one named, or accepted with a
warning when the user says so (``--allow-nonfinite``, ``allow_nonfinite=True``)."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..errors import DataFormatError, say_warning


def nonfinite(value) -> tuple[int, int, tuple | None]:
    """(NaN count, infinity count, (row, col) of the first non-finite value or None)."""
    if sp.issparse(value):
        C = value.tocoo()
        vals, where = C.data, lambda k: (int(C.row[k]), int(C.col[k]))
    else:
        arr = np.asarray(value)
        vals = arr.reshape(-1)
        where = lambda k: tuple(int(i) for i in np.unravel_index(k, arr.shape))  # noqa: E731
    if vals.dtype.kind not in "fc" or vals.size == 0:
        return 0, 0, None
    bad = ~np.isfinite(vals)
    if not bad.any():
        return 0, 0, None
    nan = int(np.isnan(vals).sum())
    return nan, int(bad.sum()) - nan, where(int(np.argmax(bad)))


def check_finite(path, value, allow: bool = False) -> None:
    nan, inf, first = nonfinite(value)
    if first is None:
        return
    what = " and ".join(x for x in (f"{nan} NaN" if nan else "", f"{inf} infinite" if inf else "") if x)
    at = ", ".join(map(str, first))
    if not allow:
        raise DataFormatError(path, f"holds {what} value(s), the first at index ({at}) (0-based); pass "
                              "--allow-nonfinite (allow_nonfinite=True) to accept them")
    say_warning(f"{path} holds {what} value(s), the first at index ({at}); accepted (--allow-nonfinite)")
