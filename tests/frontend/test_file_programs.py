"""The program fuzzer's random programs (tests/runtime/programs.py) written as `.dspla` files give
the same results as the same programs built in Python: the two front ends map every op, keyword
and flag alike. A program's steps are printed in the language's own spelling (loops, assigns and
kronecker products, printed otherwise there, are left out)."""
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
        if expr.startswith(("loop", "assign(", "kronecker(")):
            return None
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


# (the seeds whose programs have a file spelling: about three in four)
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
    assert len(SPELLED) > SEEDS * 0.6
