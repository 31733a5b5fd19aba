"""The program fuzzer's random programs (tests/runtime/programs.py) written as `.dspla` files give
the same results as the same programs built in Python: the two front ends map every op, keyword
and flag alike. A program's steps are printed in the language's own spelling: a loop as a
``while`` whose condition always holds, run to its bound; an assign as ``C[I, J] = v`` (or ``+=``
with plus; one with another accumulator has no file spelling and is left out)."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

from dspla.frontend.parser import parse
from dspla.function import Function
from tests.runtime.programs import generate

SEEDS = 400


def as_file(program) -> str | None:
    """The program as a .dspla file, or None when a step has no such spelling here."""
    lines = []
    for line in program.text[1:]:   # (the first: the sizes)
        if line.startswith("input"):
            name, typ = re.match(r"input (\w+): (.*) \(\d+ present\)$", line).groups()
            lines.append(f"input {name} : {typ}")
            continue
        if line.startswith("output"):
            lines.append(line)
            continue
        name, expr = line.split(" = ", 1)
        if expr.startswith(("loop", "assign(")):
            block = _block(name, expr)
            if block is None:
                return None
            lines += block
            continue
        if m := re.match(r"extract\((\w+), (\[[^\]]*\]|None), (\[[^\]]*\]|None)\)$", expr):
            x, rows, cols = (":" if g == "None" else g for g in m.groups())
            if "[]" in (rows, cols):
                return None
            expr = f"{x}[{rows}, {cols}]"
        expr = re.sub(r", accum=None|, mask=None, complement=(True|False)", "", expr)
        expr = expr.replace("True", "true").replace("False", "false")
        # a select's operator: a name as it is, a symbol quoted
        expr = re.sub(r"'([^']*)'", lambda q: q.group(1) if q.group(1).isalpha() else f'"{q.group(1)}"', expr)
        lines.append(f"{name} = {expr}")
    return "\n".join(lines) + "\n"


_LOOP = r"loop (\d+) times: (\w+) = ewise_add\(\w+, mxm\((\w+), \w+, (\w+)\), (\w+)\)$"
_TRAVERSAL = r"loop (\d+) times: (\w+) = mxm\((\w+), \w+, (\w+), mask=(\w+), complement, structure\); "
_ASSIGN = r"assign\((\w+), ([-\d.]+), (\[[^\]]*\]), (\[[^\]]*\]), accum=(None|plus)\)$"


def _block(name: str, expr: str) -> list[str] | None:
    """A loop or an assign as the file's statements (its result named ``name``), or None."""
    if m := re.match(_LOOP, expr):
        k, x, a, s, op = m.groups()
        return [f"{name} = {x}", f"while nvals({name}) >= 0 max {k} {{",
                f"  {name} = ewise_add({name}, mxm({a}, {name}, {s}), {op})", "}"]
    if m := re.match(_TRAVERSAL, expr):
        k, f, a, s, v = m.groups()
        q = f"q_{name}"
        return [f"{q} = {f}", f"{name} = {v}", f"while nvals({q}) >= 0 max {k} {{",
                f"  {q} = mxm({a}, {q}, {s}, mask={name}, complement=true, structure=true)",
                f"  {name} = update({name}, {q}, mask={q}, structure=true)", "}"]
    if m := re.match(_ASSIGN, expr):
        x, value, rows, cols, accum = m.groups()
        return [f"{name} = {x}", f"{name}[{rows}, {cols}] {'+=' if accum == 'plus' else '='} {value}"]
    return None


# (the seeds whose programs have a file spelling: nine in ten)
SPELLED = [s for s in range(SEEDS) if as_file(generate(s)) is not None]


@pytest.mark.parametrize("seed", SPELLED)
def test_a_random_program_as_a_file_gives_the_same_results(seed):
    program = generate(seed)
    text = as_file(program)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = program.function()(**program.inputs)
        got = Function(parse(text, "fuzz.dspla"))(**program.inputs)
    for k, w in want.items():
        g = got[k]
        assert (tuple(g.shape), np.dtype(g.dtype)) == (tuple(w.shape), np.dtype(w.dtype)), f"{k}\n{text}"
        assert np.array_equal(g.present(), w.present()), f"{k}: present entries differ\n{text}"
        assert np.array_equal(g.to_numpy(fill=0), w.to_numpy(fill=0), equal_nan=True), f"{k}: values differ\n{text}"


def test_most_programs_have_a_file_spelling():
    assert len(SPELLED) > SEEDS * 0.85
