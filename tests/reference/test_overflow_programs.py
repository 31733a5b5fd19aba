"""The program fuzzer's programs with int64 inputs near int64's limits (``generate(seed,
big=True)``): where the oracle's true value of a step leaves int64 dspla must raise
IntegerOverflow (the default mode), elsewhere equal the oracle; on one process and on 2-4
simulated ranks. Every op the generator draws is reached this way: element-wise, products and
masked products, reductions, unary ops, loops, kronecker and ewise_union."""
from __future__ import annotations

import warnings

import pytest

from dspla.kernels.overflow import IntegerOverflow
from dspla.runtime.comm.sim import SimAbort
from tests.runtime import test_program_fuzz as T
from tests.runtime.programs import generate

from harness import run_dist

SEEDS, DISTRIBUTED = 500, 100


def _check(prog, out: dict, what: str):
    for k, want in prog.expected.items():
        T.same(out[k], want.shape, want.dtype, want.present, want.values, f"{prog}\n{what}: {k}", prog.tol)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_big_integers_raise_exactly_where_the_true_value_leaves_int64(seed):
    prog = generate(seed, steps=(1, 6), big=True)
    f = prog.function()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if prog.wraps:
            with pytest.raises(IntegerOverflow, match="overflows int64"):
                f(**prog.inputs)
            return
        _check(prog, f(**prog.inputs), "one process")


@pytest.mark.parametrize("seed", range(DISTRIBUTED))
def test_big_integers_on_simulated_ranks(seed):
    prog = generate(seed, steps=(1, 6), big=True)
    P = 2 + seed % 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if prog.wraps:
            with pytest.raises((IntegerOverflow, SimAbort), match="overflows int64"):
                run_dist(prog.function(), prog.inputs, P)
            return
        _check(prog, run_dist(prog.function(), prog.inputs, P)[0], f"P = {P}")


def test_the_big_programs_reach_both_outcomes():
    progs = [generate(s, steps=(1, 6), big=True) for s in range(SEEDS)]
    wraps = sum(p.wraps for p in progs)
    assert 5 <= wraps <= SEEDS - 100, wraps   # (the overflow and the exact path both exercised)
