"""Gradients of random compositions of differentiable ops against central finite differences.

Each rule is checked alone in test_vjp.py; here they meet: a seeded program of two to five steps
(products, unions and intersections, smooth unary ops, bound scalars, row and column sums,
transposes, structural masks, select, softmax, ewise_union, a column broadcast) over dense and sparse
parameters and sparse inputs. The cotangent one rule hands the next is where patterns part (a
union's spans both operands; a mask drops entries its argument has), which a rule alone never
meets. The same programs' losses and gradients on 2-4 simulated ranks equal one process's."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import dspla as dp
from dspla.errors import PlanError
from dspla.plan.plans import plan_names

from .fd import I, P, check, declare, gradients, inputs_read
from harness import run_dist

SEEDS = 200
UNARY = ("tanh", "sigmoid", "square", "neg", "exp")
STEPS = ("matmul", "add", "sub", "mult", "apply", "bind", "reduce", "transpose", "mask", "mask", "select", "softmax",
         "union", "bcast")


def program(seed: int) -> tuple[dict, list]:
    """(specs of A: n x k, B: k x m, C and D: n x m, each a dense or sparse parameter, a sparse
    input or absent; the steps, each a kind and the seed of its choices)."""
    rng = np.random.default_rng(seed)
    n, k, m = int(rng.integers(2, 5)), int(rng.integers(2, 5)), int(rng.integers(1, 4))
    specs = {}
    for name, shape in (("A", (n, k)), ("B", (k, m)), ("C", (n, m)), ("D", (n, m))):
        u = rng.random()
        if u < 0.85:
            specs[name] = P("dense", shape) if u < 0.35 else P("sparse", shape, density=0.7) if u < 0.7 else \
                I("sparse", shape, density=0.6)
    if not any(s["role"] == "param" for s in specs.values()):
        specs["A"] = P("dense", (n, k))
    return specs, [(str(rng.choice(STEPS)), int(rng.integers(1 << 30))) for _ in range(int(rng.integers(2, 6)))]


def _pick(r, items):
    return items[int(r.integers(len(items)))] if items else None


def _step(what: str, r, pool: list):
    """One step on the values made so far: (its text, its value) or None when none fits."""
    name, x = _pick(r, pool)
    pairs = [(a, b) for a in pool for b in pool if a[1].shape == b[1].shape]
    if what == "matmul":
        pair = _pick(r, [(a, b) for a in pool for b in pool if a[1].shape[1] == b[1].shape[0]])
        return pair and (f"{pair[0][0]} @ {pair[1][0]}", pair[0][1] @ pair[1][1])
    if what in ("add", "sub", "mult", "union"):   # (often the latest value with another: where patterns part)
        latest = [p for p in pairs if p[0][0] == pool[-1][0]]
        (na, a), (nb, b) = _pick(r, latest if latest and r.random() < 0.6 else pairs)
        return {"add": (f"{na} + {nb}", a + b), "sub": (f"{na} - {nb}", a - b), "mult": (f"{na} * {nb}", a * b),
                "union": (f"ewise_union({na}, {nb}, plus, 0.5, -0.25)", dp.ewise_union(a, b, "plus", 0.5, -0.25))}[what]
    if what == "apply":
        op = str(_pick(r, UNARY))   # (exp of a tanh: bounded)
        return f"{op}({name})", dp.apply(dp.apply(x, "tanh") if op == "exp" else x, op)
    if what == "bind":
        c = float(_pick(r, [-1.5, 0.5, 2.0]))
        return (f"{name} * {c}", x * c) if r.random() < 0.5 else (f"{name} + {c}", x + c)
    if what == "reduce":
        axis = str(_pick(r, ["rows", "cols"]))
        return f"reduce({name}, plus, {axis})", dp.reduce(x, "plus", axis)
    if what == "transpose":
        return f"{name}.T", x.T
    if what == "mask":
        masked = _pick(r, [p for p in pool if p[1].shape == x.shape and p[0] != name])
        comp = bool(r.random() < 0.3)
        return masked and (f"mask({name}, {masked[0]}, structure, complement={comp})",
                           dp.mask(x, masked[1], structure=True, complement=comp))
    if what == "select":
        return f"select({name}, >, 0)", dp.select(x, ">", 0)
    if what == "softmax":
        return f"softmax({name})", dp.softmax(x)
    col = _pick(r, [p for p in pool if p[1].shape == (x.shape[0], 1) and x.shape[1] > 1])
    return col and (f"{name} + {col[0]} (a column broadcast)", x + col[1])


def builder(steps: list, text: list):
    def build(**declared):
        pool = list(declared.items())
        for what, s in steps:
            made = _step(what, np.random.default_rng(s), pool)
            if made:
                text.append(f"t{len(text)} = {made[0]}")
                pool.append((f"t{len(text) - 1}", made[1]))
        return pool[-1][1]
    return build


def _draws(seed: int):
    """(draw, specs, steps) of the programs drawn for ``seed`` whose result reads a parameter
    (ten draws: one whose result has no entry to sum is drawn again by the caller)."""
    for draw in range(seed * 10, seed * 10 + 10):
        specs, steps = program(draw)
        if any(specs[k]["role"] == "param" for k in inputs_read(builder(steps, [])(**declare(specs)))):
            yield draw, specs, steps


@pytest.mark.parametrize("seed", range(SEEDS))
def test_a_random_composition_against_finite_differences(seed):
    for draw, specs, steps in _draws(seed):
        text: list = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                check(builder(steps, text), specs, seed=draw, rtol=1e-5, atol=1e-7)
                return
            except AssertionError as e:
                if "has no value" in str(e):
                    continue
                raise AssertionError(f"program {draw}: {specs}\n  " + "\n  ".join(text)) from e
    raise AssertionError(f"no program of draws {seed * 10}-{seed * 10 + 9} reads a parameter into a value")


DIST_SEEDS = 100


@pytest.mark.parametrize("seed", range(DIST_SEEDS))
def test_a_random_compositions_gradients_are_the_same_on_every_p(seed):
    """The loss and gradients on P = 2, 3, 4 simulated ranks (a plan by the seed) equal one
    process's: the backward program is planned and distributed as any other."""
    draw, specs, steps = next(_draws(seed))
    f, _, data, _ = gradients(builder(steps, []), specs, draw)
    one = f(**data)
    plans = ["auto", *plan_names()]
    P, plan = 2 + seed % 3, plans[seed % len(plans)]
    try:
        got, _ = run_dist(f, data, P, plan=plan)
    except PlanError:   # (a plan that cannot run some product of this program: auto's choice)
        got, _ = run_dist(f, data, P)
    for k, w in one.items():
        assert np.array_equal(got[k].present(), w.present()), (draw, k)
        np.testing.assert_allclose(got[k].to_numpy(fill=0.0), w.to_numpy(fill=0.0), rtol=1e-9, atol=1e-12,
                                   err_msg=f"program {draw}: {k}")
