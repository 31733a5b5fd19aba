"""How a value presents its form: a matrix as it is, a vector (held n x 1) with shape (n,), a
scalar (held 1 x 1) with shape () and converting with float(), int(), bool() and as an index."""
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

    def _scalar(self) -> Any:
        if self._shape != (1, 1):
            raise TypeError(f"{self.name or 'this result'} is {self._shape[0]}x{self._shape[1]}, not a scalar")
        M = self._whole_local()
        if M.nvals == 0:
            raise ValueError(f"{self.name or 'this result'} is a missing scalar (no entry): it has no value")
        return M.to_coo()[2][0].item()

    def __float__(self) -> float:
        return float(self._scalar())

    def __int__(self) -> int:
        return int(self._scalar())

    def __index__(self) -> int:
        v = self._scalar()
        if isinstance(v, float):
            raise TypeError(f"{self.name or 'this result'} holds a float, not an integer")
        return int(v)

    def __bool__(self) -> bool:
        return bool(self._scalar()) if self.form == "scalar" else True

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> NDArray[Any]:
        a = self.to_numpy()
        return a if dtype is None else a.astype(dtype)
