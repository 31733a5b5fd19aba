"""The caller's inputs bound to a program's declared inputs: every one given, none extra, the
shapes checked before any is converted, each converted, the dims' sizes read off them."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from ..errors import InputError, did_you_mean
from ..ir import Node
from .array import InputValue, Meta
from .conversion import bind_dims, check_shapes, to_matrix

if TYPE_CHECKING:
    from graphblas import Matrix


def bind_inputs(decls: Mapping[str, Node], inputs: Mapping[str, InputValue],
                bound_dims: Mapping | None = None) -> tuple[dict[str, Matrix | Meta], dict[str, int]]:
    """(name -> graphblas Matrix, or the Meta of a value passed distributed; dim symbol -> size).
    ``bound_dims``: the sizes the program binds dims to (``ir.check.dim_bindings``)."""
    missing = [k for k in decls if k not in inputs]
    extra = [k for k in inputs if k not in decls]
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing input{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}")
        if extra:
            meant = [f"{k!r} (did you mean {' or '.join(map(repr, m))}?)" if (m := did_you_mean(k, missing))
                     else repr(k) for k in extra]
            parts.append(f"unexpected input{'s' if len(extra) > 1 else ''} {', '.join(meant)}")
        raise InputError(f"{'; '.join(parts)}; the program takes "
                         f"{', '.join(f'{k}: {n.type}' for k, n in decls.items())}")
    check_shapes(decls.values(), inputs, bound_dims)   # sizes first, before converting anything
    mats = {k: to_matrix(inputs[k], decls[k]) for k in decls}
    return mats, bind_dims(decls.values(), mats, bound_dims)
