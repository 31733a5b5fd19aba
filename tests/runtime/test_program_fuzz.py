"""Every program valid on one process runs on P processes with the same result: a few hundred
random valid programs (tests/runtime/programs.py, fixed seeds), each run on one process and
compared with the dense-numpy oracle, then on 2, 3 or 4 simulated ranks (in turn) with a plan,
a partition method and a way of planning that vary with the seed, and compared with the one
process run: the same shape, dtype and present entries, integer and bool values equal, float
values equal to rounding. ``pytest -k 'fuzz and 123'`` runs one program alone."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import dspla as dp
from dspla.errors import LoopBoundWarning, PlanError
from dspla.plan.options import Options
from dspla.plan.plans import plan_names
from tests.runtime.programs import generate

from harness import run_dist

PROGRAMS = 500
PLANS = ["auto", *plan_names()]


def options(seed: int, f, inputs: dict, P: int) -> dict:
    """The seed's options. The plan forced is the seed's in turn among those whose check accepts
    every product of this program at P (asked at planning, on one process: a plan that cannot run
    a product refuses it there, naming it); auto accepts every program."""
    opt: dict = {}
    if seed % 5 == 1:
        opt["spmd"] = False   # rank 0 plans every rank's program
    if seed % 4 == 2:
        opt["partition"] = "random"
    for k in range(len(PLANS)):
        plan = PLANS[(seed + k) % len(PLANS)]
        if plan == "auto" or _accepts(f, inputs, P, {**opt, "plan": plan}):
            return {**opt, "plan": plan}
    raise AssertionError("unreachable: auto is among the plans")


def _accepts(f, inputs: dict, P: int, opt: dict) -> bool:
    try:
        f.plan(P, inputs, Options(**opt))
    except PlanError as e:
        if f"plan {opt['plan']}, asked for" not in str(e):
            raise
        return False
    return True


def same(got, shape, dtype, present, values, what: str, tol: float = 1e-9):
    """``got`` (an Array) has this shape, dtype and present pattern, with ``values`` there (floats
    to ``tol``)."""
    assert tuple(got.shape) == tuple(shape), f"{what}: shape {got.shape}, expected {shape}"
    assert np.dtype(got.dtype) == np.dtype(dtype), f"{what}: dtype {got.dtype}, expected {dtype}"
    r, c, v = got.to_coo()
    assert ((r < shape[0]) & (c < shape[1])).all(), f"{what}: entries outside the shape"
    pres = np.zeros(shape, bool)
    pres[r, c] = True
    assert np.array_equal(pres, present), f"{what}: present at {np.argwhere(pres != present)[:6].tolist()} differ"
    w = values[r, c]
    if np.dtype(dtype).kind == "f":
        finite = np.abs(w[np.isfinite(w)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        ok = np.isclose(v, w, rtol=tol, atol=tol * scale, equal_nan=True)
        assert ok.all(), f"{what}: values {v[~ok][:4]} expected {w[~ok][:4]}"
    else:
        assert np.array_equal(v, w), f"{what}: values {v} expected {w}"


@pytest.mark.parametrize("seed", range(PROGRAMS))
def test_fuzz_program_same_on_every_P(seed):
    prog = generate(seed)
    P = 2 + seed % 3
    tol = prog.tol
    f = prog.function()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoopBoundWarning)   # (the loops run to their bound on purpose)
        one = f(**prog.inputs)
        for k, want in prog.expected.items():
            same(one[k], want.shape, want.dtype, want.present, want.values, f"{prog}\n1 process vs oracle: {k}", tol)
        opt = options(seed, f, prog.inputs, P)
        got, _ = run_dist(f, prog.inputs, P, **opt)
    for k in prog.expected:
        w = one[k]
        same(got[k], w.shape, w.dtype, w.present(), w.to_numpy(fill=0).astype(w.dtype),
             f"{prog}\nP = {P} {opt} vs 1 process: {k}", tol)


def test_the_programs_cover_the_ops_and_shapes():
    """The generator reaches what the test claims: every kind of step, empty and one-sized dims,
    every input kind, unused inputs (declared, read by no output)."""
    texts = [generate(s) for s in range(PROGRAMS)]
    steps = " ".join(line for p in texts for line in p.text)
    for what in ("mxm(", "mask=", "ewise_add(", "ewise_mult(", "apply(", "select(", "reduce(", ".T", "mask(",
                 "softmax(", "nvals(", "cast(", "full(", " + ", "loop ", "extract(", "kronecker(", "update(",
                 "ewise_union(", "apply_index(", "assign("):
        assert what in steps, what
    sizes = [s for p in texts for s in (p.text[0],)]
    assert any("'n': 0" in s for s in sizes) and any("'n': 1" in s for s in sizes)
    unused = [p for p in texts[:60] if set(p.inputs) - set(dp.function(outputs=p.outputs).input_names)]
    assert unused
