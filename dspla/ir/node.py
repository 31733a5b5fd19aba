"""The IR: an open set of ops (each defined by a module of dspla/ops) and one immutable, printable
node type.

A Node is an op applied to argument nodes with attributes, carrying its inferred Type.
Equality and hashing are structural (op, args, attrs, type); the source span and the
user's name for a value are metadata and do not take part, so the same computation written
in Python or in a .dspla file compares equal.
"""
from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import Span
from .types import Type


class _Ops(type):
    """``Op.MXM`` is the op named ``"mxm"``; ``for op in Op`` gives every op defined so far, in the
    order they were defined. The ops themselves are defined in dspla/ops, one module each."""

    def __getattr__(cls, attr: str) -> "Op":
        # (reached only for a name no op has: each op is a class attribute, set where it is defined)
        raise AttributeError(f"no op {attr} (the ops are defined in dspla/ops)")

    def __iter__(cls) -> Iterator["Op"]:
        return iter(tuple(cls._by_value.values()))   # type: ignore[attr-defined]

    def __len__(cls) -> int:
        return len(cls._by_value)   # type: ignore[attr-defined]


class Op(metaclass=_Ops):
    """An operation of the IR, named as explain prints it (``mxm``, ``ewise_add``): one object per
    name, so ops compare by identity (``n.op is Op.MXM``). The set of ops is open: a module of
    dspla/ops defines one (``Op("kronecker")``) with all its rules."""

    __slots__ = ("value", "name")
    _by_value: ClassVar[dict[str, "Op"]] = {}
    value: str
    name: str

    def __new__(cls, value: str) -> "Op":
        op = cls._by_value.get(value)
        if op is None:
            if not value.isidentifier():
                raise ValueError(f"an op is named by an identifier, got {value!r}")
            op = object.__new__(cls)
            op.value, op.name = value, value.upper()
            cls._by_value[value] = op
            # ``Op.MXM``: a class attribute, found without a Python call (passes, planning and the
            # runtime name ops thousands of times a program)
            type.__setattr__(cls, op.name, op)
        return op

    def __reduce__(self) -> tuple:
        return (Op, (self.value,))   # (plans travel pickled: the same op on every rank)

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"<Op.{self.name}>"

    def __copy__(self) -> "Op":
        return self

    def __deepcopy__(self, memo: dict) -> "Op":
        return self


Attrs = tuple  # tuple of (key, value) pairs in a fixed order; values hashable


@dataclass(frozen=True, eq=False)
class Node:
    op: Op
    args: tuple["Node", ...]
    attrs: Attrs
    type: Type
    span: Span | None = field(default=None, repr=False)
    name: str | None = field(default=None, repr=False)  # the user's name for this value, if any
    # dims its type rule bound to sizes, (symbol, size) (ir/typing.py: unify); metadata like the span
    binds: tuple = field(default=(), repr=False)

    def __post_init__(self):
        object.__setattr__(self, "_hash", hash((self.op, self.args, self.attrs, self.type)))

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        if self is other:
            return True
        if not isinstance(other, Node) or self._hash != other._hash:
            return False
        # pairwise over both graphs with a stack, not recursion: programs may be thousands deep
        stack, seen = [(self, other)], set()
        while stack:
            a, b = stack.pop()
            if a is b or (id(a), id(b)) in seen:
                continue
            if (a._hash != b._hash or a.op is not b.op or not _same_attrs(a.attrs, b.attrs) or a.type != b.type
                    or len(a.args) != len(b.args)):
                return False
            seen.add((id(a), id(b)))
            stack.extend(zip(a.args, b.args))
        return True

    def attr(self, key: str, default: Any = None) -> Any:
        for k, v in self.attrs:
            if k == key:
                return v
        return default

    def replace(self, **kw) -> "Node":
        d = dict(op=self.op, args=self.args, attrs=self.attrs, type=self.type, span=self.span, name=self.name,
                 binds=self.binds)
        d.update(kw)
        return Node(**d)

    @property
    def label(self) -> str:
        """How messages refer to this value: its name if it has one, else its op."""
        if self.op is Op.INPUT:
            return self.attr("name")
        return self.name or self.op_text()

    def op_text(self) -> str:
        """The op with its attributes, e.g. ``mxm[plus_second]`` or ``apply_bind[times, 2.0, left]``:
        values in order, a true flag by its name, unset (None) and false ones left out."""
        vals = [k if v is True else _fmt(v) for k, v in self.attrs
                if k not in ("name", "role") and v is not None and v is not False and not _is_program(v)]
        return f"{self.op.value}[{', '.join(vals)}]" if vals else self.op.value

    def __repr__(self) -> str:
        args = ", ".join(a.label for a in self.args)
        return f"<{self.op_text()}({args}) : {self.type}>"


def _same_attrs(a: Attrs, b: Attrs) -> bool:
    """Equal attributes, a float's sign included: 0.0 == -0.0 in Python, but X / 0.0 and
    X / -0.0 are different values (+inf and -inf), so they must not become one node."""
    return a == b and all(not isinstance(x, float) or math.copysign(1.0, x) == math.copysign(1.0, y)
                          for (_, x), (_, y) in zip(a, b))


def _is_program(v) -> bool:
    return hasattr(v, "outputs") and hasattr(v, "toposort")


def _fmt(v) -> str:
    if isinstance(v, float) and v.is_integer():
        return repr(v)
    return str(v)
