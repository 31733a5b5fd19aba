"""The algebra: binary operators, monoids, semirings, unary operators and select predicates, each
a row in a table keyed by its GraphBLAS name (operators.py), with the facts reverse mode reads on
the binary operators (derivatives.py), and a user's own operators and the lookups by any name
(user.py). Adding an operator or semiring is adding a row; nothing else has to change."""
from .derivatives import Derivatives
from .operators import (
    BINARY,
    MONOIDS,
    REDUCTIONS,
    SELECT,
    SELECT_ALIASES,
    SEMIRINGS,
    UNARY,
    BinaryOp,
    Monoid,
    Reduction,
    SelectOp,
    Semiring,
    UnaryOp,
    UserUfunc,
    get_monoid,
    get_select,
    get_semiring,
)
from .user import define_binary, define_monoid, define_semiring, define_unary, get_binary, get_unary

__all__ = [
    "BINARY", "MONOIDS", "REDUCTIONS", "SELECT", "SELECT_ALIASES", "SEMIRINGS", "UNARY", "BinaryOp", "Derivatives",
    "Monoid", "Reduction", "SelectOp", "Semiring", "UnaryOp", "UserUfunc", "define_binary", "define_monoid",
    "define_semiring", "define_unary", "get_binary", "get_monoid", "get_select", "get_semiring", "get_unary",
]
