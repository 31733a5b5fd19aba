"""How a value presents its form: a matrix as it is, a vector (held n x 1) with shape (n,), a
scalar (held 1 x 1) with shape () (``Array`` converts a 1 x 1 value with float(), int(), bool(),
as an index and by ``.value``)."""
from __future__ import annotations

from typing import Any

from numpy.typing import DTypeLike, NDArray


class Presented:
    """What ``Array`` adds for its form (``self.form``, ``self._shape``, ``self._whole_local()``)."""

    __slots__ = ()
    form: str
    name: str | None
    _shape: tuple[int, int]

    def _whole_local(self) -> Any: ...

    def to_numpy(self) -> Any: ...

    @property
    def shape(self) -> tuple[int, ...]:
        """(rows, columns); a vector's (n,), a scalar's ()."""
        return self._shape[:{"matrix": 2, "vector": 1, "scalar": 0}[self.form]]

    def _presented(self, a: NDArray[Any]) -> NDArray[Any]:
        return a if self.form == "matrix" else a.reshape(self.shape)

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> NDArray[Any]:
        a = self.to_numpy()
        return a if dtype is None else a.astype(dtype)
