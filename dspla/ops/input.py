"""input: a value the caller gives (attributes: its name; its role, 'input' | 'param' | 'loop':
data, a parameter a trainer updates, or a loop's placeholder; its default, a number or None: a
dense input not given is every entry that number, its dims sized by the inputs given). Python:
``dp.sparse``, ``dp.dense``, ``dp.param``, ``dp.vector``, ``dp.scalar``, ``dp.declare`` (each with
``default=``); files: ``input A : sparse[n, n]``, ``input v : vector[n]``, ``input k : scalar
int64 = 3``."""
from __future__ import annotations

from typing import Literal

import numpy as np

from .._types import DTypeLike, KindLike, ShapeLike
from ..errors import DimensionMismatch, DsplaError, Span
from ..ir.types import FORMS, MAX_DIM, Dim, DType, Kind, Type, fitting
from .define import Expr, Facts, define, make, named, span_or_caller, spelling

INPUT = define("input", attrs=("name", "role", "default"))


@INPUT.type_rule
def _type(args, attrs, given, where, span):
    if given is None:
        raise ValueError(f"{where}: an input needs its declared type")
    return given


@INPUT.eval_rule()
def _evaluate(node, args, env):
    return env.inputs[node.attr("name")]


@INPUT.fact_rule
def _facts(n, a):
    return Facts(n.type.kind.value == "dense")   # dense inputs are checked full at bind time


@INPUT.lower_rule
def _lower(pl, n):
    raise AssertionError(f"{n!r} is handled before lowering")


@INPUT.work_rule
def _work(n, args, out):
    return 0   # (given: nothing is computed)


@INPUT.vjp_rule()
def _vjp(n, g, needs, b):
    return ()


# ------------------------------------------------------------------------- the spellings
def shape_of(shape: ShapeLike, where: str) -> tuple[Dim, Dim]:
    if isinstance(shape, (int, str)):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise DimensionMismatch(f"{where}: a shape is a dim or a pair of dims (ints or symbol names), got "
                                f"{type(shape).__name__}")
    shape = tuple(shape)
    if len(shape) == 1:
        shape = (shape[0], 1)
    if len(shape) != 2:
        raise DimensionMismatch(f"{where}: a shape has one or two dims, got {shape!r}")
    for d in shape:
        if isinstance(d, bool) or not (isinstance(d, str) and d.isidentifier() or isinstance(d, int) and d >= 0):
            raise DimensionMismatch(f"{where}: dims are non-negative ints or symbol names, got {d!r}")
        if isinstance(d, int) and d > MAX_DIM:
            raise DimensionMismatch(f"{where}: dim {d} does not fit in 64 bits")
    return shape


@spelling()
def declare(name: str, kind: KindLike, shape: ShapeLike, dtype: DTypeLike = "float64",
            role: Literal["input", "param"] = "input", form: Literal["matrix", "vector", "scalar"] = "matrix", *,
            default: bool | int | float | None = None, span: Span | None = None) -> Expr:
    if not isinstance(name, str) or not name.isidentifier():
        raise DsplaError(f"an input name must be an identifier, got {name!r}", span)
    if role not in ("input", "param"):
        raise ValueError(f"role is 'input' or 'param', got {role!r}")
    if form not in FORMS:
        raise ValueError(f"form is one of {', '.join(FORMS)}, got {form!r}")
    t = Type(Kind(str(kind)), shape_of(shape, name), named(DType.parse, dtype, span))
    if fitting(form, t.shape) != form:
        raise DimensionMismatch(f"{name}: a {form} is {'n x 1' if form == 'vector' else '1 x 1'}, got {list(t.shape)}",
                                span_or_caller(span))
    t = t.with_(form=form)
    if default is not None:
        default = _default(name, t, default, span)
    return Expr(make(INPUT.op, (), (("name", name), ("role", role), ("default", default)), type=t,
                     span=span_or_caller(span), name=name))


def _default(name: str, t: Type, value, span: Span | None) -> bool | int | float:
    """A default checked against the declaration: a dense input's, of its dtype's kind, fitting it."""
    if t.kind is not Kind.dense:
        raise DsplaError(f"{name}: only a dense input (every entry present) takes a default; {name} is declared "
                         f"{t}", span_or_caller(span))
    value = value.item() if hasattr(value, "item") else value
    dt = np.dtype(t.dtype.value)
    ok = isinstance(value, bool) if dt.kind == "b" else \
        isinstance(value, int) and not isinstance(value, bool) if dt.kind in "iu" else \
        isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok:
        want = "true or false" if dt.kind == "b" else "a whole number" if dt.kind in "iu" else "a number"
        raise DsplaError(f"{name}: its default is {value!r}, but it is {t.dtype.value}: give {want}",
                         span_or_caller(span))
    if dt.kind in "iu" and not np.iinfo(dt).min <= value <= np.iinfo(dt).max:
        raise DsplaError(f"{name}: its default {value} does not fit in {t.dtype.value}", span_or_caller(span))
    return float(value) if dt.kind == "f" else value


@spelling()
def sparse(name: str, shape: ShapeLike, dtype: DTypeLike = "float64", *, span: Span | None = None) -> Expr:
    """A sparse input matrix: ``sparse("A", ("n", "n"))``; symbolic dims bind from data."""
    return declare(name, Kind.sparse, shape, dtype, span=span_or_caller(span))


@spelling()
def dense(name: str, shape: ShapeLike, dtype: DTypeLike = "float64", *, default: bool | int | float | None = None,
          span: Span | None = None) -> Expr:
    """A dense input (every entry present): ``dense("X", ("n", "f"))``; with ``default=v``, every
    entry v when the caller does not give it."""
    return declare(name, Kind.dense, shape, dtype, default=default, span=span_or_caller(span))


@spelling()
def param(name: str, shape: ShapeLike, dtype: DTypeLike = "float64", kind: KindLike = "dense", *,
          default: bool | int | float | None = None, span: Span | None = None) -> Expr:
    """A parameter: an input a trainer may update (dense by default)."""
    return declare(name, kind, shape, dtype, role="param", default=default, span=span_or_caller(span))


@spelling()
def vector(name: str, n: Dim, dtype: DTypeLike = "float64", kind: KindLike = "dense", *,
           default: bool | int | float | None = None, span: Span | None = None) -> Expr:
    """A vector input of size n (held as an n x 1 column; its results present shape (n,)); with
    ``default=v``, every entry v when the caller does not give it."""
    return declare(name, kind, (n, 1), dtype, form="vector", default=default, span=span_or_caller(span))


@spelling()
def scalar(name: str, dtype: DTypeLike = "float64", *, default: bool | int | float | None = None,
           span: Span | None = None) -> Expr:
    """A scalar input (held as 1 x 1; give it a Python number); ``default=v``: v when not given."""
    return declare(name, "dense", (1, 1), dtype, form="scalar", default=default, span=span_or_caller(span))
