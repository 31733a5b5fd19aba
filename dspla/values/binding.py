"""The caller's inputs bound to a program's declared inputs: every one given (or declared with a
default), none extra, the shapes checked before any is converted, each converted, the dims' sizes
read off them."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError, did_you_mean
from ..ir import Node
from .array import InputValue, Meta
from .conversion import _Shape, bind_dims, check_shapes, to_matrix

if TYPE_CHECKING:
    from graphblas import Matrix


def bind_inputs(decls: Mapping[str, Node], inputs: Mapping[str, InputValue],
                bound_dims: Mapping | None = None) -> tuple[dict[str, Matrix | Meta], dict[str, int]]:
    """(name -> graphblas Matrix, or the Meta of a value passed distributed; dim symbol -> size).
    ``bound_dims``: the sizes the program binds dims to (``ir.check.dim_bindings``)."""
    inputs = with_defaults(decls, inputs, bound_dims)
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


def with_defaults(decls: Mapping[str, Node], inputs: Mapping[str, InputValue], bound_dims: Mapping | None = None,
                  made: dict | None = None) -> Mapping[str, InputValue]:
    """``inputs`` plus the value of each declared input not given that has a default: every entry
    the default, sized by the dims the given inputs (or the program) bind. ``made``: the values
    made before, by name and shape, passed again as the same objects (so an unchanged call is
    seen as one: nothing converted or sent again)."""
    todo = [n for k, n in decls.items() if k not in inputs and n.attr("default") is not None]
    if not todo:
        return inputs
    shapes = {}
    for k, n in decls.items():
        shape = getattr(inputs.get(k), "shape", None)
        if isinstance(shape, tuple) and len(shape) == 1 and n.type.form == "vector":
            shape = (shape[0], 1)
        if isinstance(shape, tuple) and len(shape) == 2:
            shapes[k] = _Shape(shape)
    dims = bind_dims([n for k, n in decls.items() if k in shapes], shapes, bound_dims)
    out = dict(inputs)
    for n in todo:
        name, value = n.attr("name"), n.attr("default")
        unknown = [d for d in n.type.shape if isinstance(d, str) and d not in dims]
        if unknown:
            raise InputError(f"input {name!r} was not given and defaults to every entry {value!r}, but no input given "
                             f"has the dim {unknown[0]!r} that sizes it: give {name}, or an input of that dim")
        shape = tuple(dims[d] if isinstance(d, str) else d for d in n.type.shape)
        key = (name, shape)
        if made is None or key not in made:
            v = np.full(shape, value, dtype=np.dtype(n.type.dtype.value))
            if made is None:
                out[name] = v
                continue
            made[key] = v
        out[name] = made[key]
    return out
