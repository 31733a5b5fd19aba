"""as_vector, as_scalar, as_matrix: the same value presented in another form (attribute: form). A
vector is held n x 1 and a scalar 1 x 1 everywhere below the front ends, so this moves and
computes nothing: plans and kernels never see a form. Python: ``dp.as_vector(x)``, ...; files: the
same."""
from __future__ import annotations

from ..errors import DimensionMismatch, Span
from .define import EXPR, Expr, define, make, node_of, span_or_caller, spelling

FORM = define("as", attrs=("form",))


@FORM.type_rule
def _type(args, attrs, given, where, span):
    (x,) = args
    form = attrs["form"]
    want = {"vector": "n x 1", "scalar": "1 x 1"}.get(form)
    t = x.type.with_(form=form)
    if t.form != form:
        raise DimensionMismatch(f"{where}: a {form} is {want}, got {x.label} of shape {list(x.type.shape)}", span)
    return t


@FORM.eval_rule()
def _evaluate(node, args, env):
    return args[0]


@FORM.fact_rule
def _facts(n, a):
    return a[0]


@FORM.lower_rule
def _lower(pl, n):
    pl.set(n, pl.value(n.args[0]))   # the same slot: the layout depends on the shape only


@FORM.work_rule
def _work(n, args, out):
    return 0


@FORM.vjp_rule()
def _vjp(n, g, needs, b):
    return (g,)


def _as(x: Expr, form: str, span: Span | None) -> Expr:
    node = node_of(x)
    if node.type.form == form:
        return x if isinstance(x, Expr) else Expr(node)
    return Expr(make(FORM.op, (node,), (("form", form),), span=span))


@spelling(file=(("x", EXPR),))
def as_vector(x: Expr, *, span: Span | None = None) -> Expr:
    """An n x 1 value as a vector (its result's ``to_numpy()`` has shape (n,))."""
    return _as(x, "vector", span_or_caller(span))


@spelling(file=(("x", EXPR),))
def as_scalar(x: Expr, *, span: Span | None = None) -> Expr:
    """A 1 x 1 value as a scalar (its result converts with float(), int(), bool())."""
    return _as(x, "scalar", span_or_caller(span))


@spelling(file=(("x", EXPR),))
def as_matrix(x: Expr, *, span: Span | None = None) -> Expr:
    """A vector or scalar as the n x 1 or 1 x 1 matrix that holds it."""
    return _as(x, "matrix", span_or_caller(span))
