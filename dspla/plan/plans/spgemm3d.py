"""spgemm3d — 3D sparse x sparse product (Azad, Buluç et al., "Exploiting Multiple Levels of
Parallelism in Sparse Matrix-Matrix Multiplication"; CombBLAS's SpParMat3D): the inner
dimension split into c layers of P/c ranks each, every layer a Sparse SUMMA on its own pr x pc
grid over its part (plans/spgemm2d.py), the layers' partial products summed by the monoid as
their rows return to their 1D owners. Each rank holds 1/P of A and of B; A moves within its
layer's process rows, B within its process columns (exact words), the partial products to the
rows' owners (estimated). c: ``--replication`` (default 2)."""
from __future__ import annotations

from . import register_plan
from .spgemm2d import lower_layers, sparse_static_check


def layers(ctx) -> int:
    return ctx.opt.replication or 2


def _check(ctx):
    c = layers(ctx)
    if c < 2 or ctx.P % c:
        return f"layers c={c} must be at least 2 and divide P={ctx.P} (--replication sets c)"
    return sparse_static_check(ctx)


@register_plan("spgemm3d", check=_check, spmd=True, general=False)
def lower(ctx):
    """3D: c layers over the inner dimension, a Sparse SUMMA in each, partial products summed."""
    lower_layers(ctx, layers(ctx))
