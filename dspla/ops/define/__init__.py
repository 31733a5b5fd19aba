"""What op definitions are written with: the registry and its rules (registry.py), the facts
planning proves (facts.py), type-rule helpers (shape.py), the Python front end's handle ``Expr``
and the builders' helpers (expr.py), how an op is spelled in both front ends (spelling.py), and
where the user wrote it (span.py)."""
from .expr import (
    Expr,
    arith,
    bool_mask,
    compare,
    is_scalar,
    mask_args,
    named,
    node_of,
    scalar,
    span_or_caller,
    vector_check,
)
from .facts import NOTHING, Facts, elementwise_over, meet, prove_sub
from .methods import CALLS, Methods
from .registry import (
    COMPOSITES,
    DEFINITIONS,
    RULES,
    Definition,
    Env,
    Family,
    Where,
    check,
    composite,
    define,
    definition,
    make,
    table,
    touched,
)
from .shape import (
    MASK_KINDS,
    broadcast_shape,
    check_mask,
    dims_differ,
    same_dims,
    same_type,
    scalar_dtype,
    unify,
    unify_shapes,
)
from .span import caller_span
from .spelling import (
    AXIS,
    BINARY,
    BOOL,
    DIM,
    DTYPE,
    EXPR,
    INDEX_UNARY,
    MASKED,
    MONOID,
    OPERATOR,
    REQUIRED,
    SCALAR,
    SELECT,
    SEMIRING,
    SPELLINGS,
    THUNK,
    UNARY,
    Spelling,
    builder,
    spelling,
)

__all__ = [
    "AXIS", "BINARY", "BOOL", "CALLS", "COMPOSITES", "DEFINITIONS", "DIM", "DTYPE", "Definition", "EXPR", "Env", "Expr",
    "Facts", "Family", "INDEX_UNARY", "MASKED", "MASK_KINDS", "MONOID", "Methods", "NOTHING",
    "OPERATOR", "REQUIRED", "RULES", "SCALAR", "THUNK",
    "SELECT", "SEMIRING", "SPELLINGS", "Spelling", "UNARY", "Where", "arith", "broadcast_shape", "builder",
    "bool_mask", "caller_span", "check", "check_mask", "compare", "composite", "define", "definition",
    "dims_differ", "elementwise_over", "is_scalar", "make", "mask_args", "meet", "named", "node_of", "prove_sub",
    "scalar", "same_dims", "same_type", "scalar_dtype", "span_or_caller", "spelling", "table", "touched", "unify",
    "unify_shapes", "vector_check",
]
