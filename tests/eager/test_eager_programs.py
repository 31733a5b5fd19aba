"""The program fuzzer's random programs (tests/runtime/programs.py) on values at hand: every step,
loops included, runs at once on ``dp.array`` values, and each output equals the dense-numpy
oracle's (present entries, dtype, values; float32 programs to 1e-5)."""
import warnings

import numpy as np
import pytest

import dspla as dp
from tests.runtime.programs import generate
from tests.runtime.test_program_fuzz import same

SEEDS = 200


@pytest.mark.parametrize("seed", range(SEEDS))
def test_a_random_program_of_values_equals_the_oracle(seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (the loops run to their bound on purpose)
        prog = generate(seed, eager=True)
    tol = 1e-5 if any(getattr(v, "dtype", None) == np.float32 for v in prog.inputs.values()) else 1e-9
    for k, want in prog.expected.items():
        got = prog.outputs[k]
        assert isinstance(got, dp.Array), f"{prog}\n{k} is {type(got).__name__}"
        same(got, want.shape, want.dtype, want.present, want.values, f"{prog}\neager vs oracle: {k}", tol)


def test_the_programs_of_values_reach_loops_and_the_graphblas_steps():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        steps = " ".join(line for s in range(SEEDS) for line in generate(s, eager=True).text)
    for what in ("loop ", "mxm(", "extract(", "kronecker(", "update(", "assign(", "reduce(", "select("):
        assert what in steps, what
