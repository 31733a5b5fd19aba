"""The program fuzzer's random programs (tests/runtime/programs.py) on values at hand: every step,
loops included, runs at once on ``dp.array`` values, and each output equals the dense-numpy
oracle's (present entries, dtype, values; float32 programs to 1e-5); on one process and on 2-4
simulated ranks, where each step's results stay distributed and pass into the next steps in
whatever layout they came out."""
import warnings

import pytest

import dspla as dp
from dspla.runtime.comm.sim import run_simulated
from tests.runtime.programs import generate
from tests.runtime.test_program_fuzz import same

SEEDS = 200
DISTRIBUTED = 45


def _check(prog) -> None:
    for k, want in prog.expected.items():
        got = prog.outputs[k]
        assert isinstance(got, dp.Array), f"{prog}\n{k} is {type(got).__name__}"
        same(got, want.shape, want.dtype, want.present, want.values, f"{prog}\neager vs oracle: {k}", prog.tol)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_a_random_program_of_values_equals_the_oracle(seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (the loops run to their bound on purpose)
        prog = generate(seed, eager=True)
    _check(prog)


@pytest.mark.parametrize("seed", range(DISTRIBUTED))
def test_a_random_program_of_values_on_ranks_equals_the_oracle(seed):
    P = 2 + seed % 3

    def body(comm):
        with dp.eager.running_on(comm), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _check(generate(seed, eager=True))   # (every rank checks: gathering is a collective)
    run_simulated(P, body, timeout=120)


def test_the_programs_of_values_reach_loops_and_the_graphblas_steps():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        steps = " ".join(line for s in range(SEEDS) for line in generate(s, eager=True).text)
    for what in ("loop ", "mxm(", "extract(", "kronecker(", "update(", "assign(", "reduce(", "select("):
        assert what in steps, what
