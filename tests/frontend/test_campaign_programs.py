"""A malformed-program campaign, kept: every program below is wrong, and
``dspla check`` must say so with one message that locates it (``file:line:col``), exit 2 and
never show a traceback.

Each program marks where the error is with ``¦`` (removed before writing the file): the
expected line and column are where the marker stood, written by hand, not computed by dspla.
"""
from __future__ import annotations

import pytest

from dspla.cli.main import main

M = "¦"
H = "input A : sparse[n, n]\ninput X : dense[n, k]\n"          # a header most cases share
HX = "input X : dense[n, n]\n"

CASES = [
    # -- syntax
    ("stray character", H + "T = A @ X ¦$\noutput T\n", "unexpected character"),
    ("unbalanced (", H + "T = (A @ X¦\noutput T\n", "unexpected end of line"),
    ("unbalanced )", H + "T = A @ X¦)\noutput T\n", "unexpected"),
    ("dangling +", H + "T = A @ X +¦\noutput T\n", "unexpected end of line"),
    ("dangling @", H + "T = A @¦\noutput T\n", "unexpected end of line"),
    ("two operators", H + "T = A @ ¦* X\noutput T\n", "unexpected"),
    ("missing =", H + "T ¦A @ X\noutput T\n", "unexpected"),
    ("double =", H + "T = ¦= A\noutput T\n", "unexpected"),
    ("empty assignment", H + "T =¦\noutput T\n", "unexpected end of line"),
    ("decl without kind", "input A : ¦[n, n]\noutput A\n", "unexpected"),
    ("decl bad kind", "input A : ¦matrix[n, n]\noutput A\n", "unexpected"),
    ("decl no brackets", "input A : sparse ¦n, n\noutput A\n", "unexpected"),
    ("decl empty dims", "input A : sparse[¦]\noutput A\n", "unexpected"),
    ("decl three dims", "input A : sparse[n, n¦, n]\noutput A\n", "expected ']'"),
    ("decl negative dim", "input A : sparse[¦-3, 3]\noutput A\n", "unexpected"),
    ("decl float dim", "input A : sparse[3¦.5, 3]\noutput A\n", "unexpected"),
    ("decl bad dtype", "input A : sparse[n, n] ¦complex128\noutput A\n", "unexpected"),
    ("decl bad role", "inputs ¦A : sparse[n, n]\noutput A\n", "unexpected 'A'"),
    ("output nothing", H + "T = A @ X\noutput¦\n", "unexpected end of line"),
    ("output expression", H + "output A ¦@ X\n", "unexpected"),
    ("output trailing comma", H + "T = A @ X\noutput T,¦\n", "unexpected end of line"),
    ("call unclosed", H + "T = mxm(A, X¦\noutput T\n", "unexpected end of line"),
    ("call double comma", H + "T = mxm(A, ¦, X)\noutput T\n", "unexpected"),
    ("kwarg without value", H + "T = mxm(A, X, semiring=¦)\noutput T\n", "unexpected"),
    ("number then name", H + "T = 2¦X\noutput T\n", "unexpected"),
    ("dot without T", H + "T = X¦.U\noutput T\n", "unexpected"),
    ("power dangling", H + "T = X **¦\noutput T\n", "unexpected"),
    ("unterminated string", H + "T = mxm(A, X, ¦\"plus_times)\noutput T\n", "unexpected character"),
    ("string across lines", H + "T = mxm(A, X, ¦\"plus\n_times\")\noutput T\n", "unexpected character"),
    ("tab garbage", H + "T = A @ X\t¦`\noutput T\n", "unexpected character"),
    ("unicode operator", H + "T = A ¦× X\noutput T\n", "unexpected character"),
    ("nul byte", H + "T = A @ X ¦\x00\noutput T\n", "unexpected character"),
    ("backslash continuation misuse", H + "T = A @ ¦\\ X\noutput T\n", "unexpected character"),
    ("semicolon", H + "T = A @ X¦; output T\n", "unexpected character"),
    ("assignment to literal", H + "¦3 = A\noutput A\n", "unexpected"),
    ("keyword as name", H + "output ¦= A @ X\noutput A\n", "unexpected '='"),
    ("empty parens", H + "T = (¦)\noutput T\n", "unexpected"),
    ("only a comment", "# nothing here¦\n", "no 'output' statement"),
    ("empty file", "¦", "no 'output' statement"),
    # -- names
    ("unknown variable", H + "T = A @ ¦Y\noutput T\n", "unknown variable 'Y'"),
    ("unknown variable in call", H + "T = mxm(A, ¦Z)\noutput T\n", "unknown variable 'Z'"),
    ("unknown output", H + "T = A @ X\noutput ¦U\n", "unknown variable 'U'"),
    ("unknown function", H + "T = ¦mxv2(A, X)\noutput T\n", "unknown function 'mxv2'"),
    ("unknown semiring", H + "T = mxm(A, X, ¦min_plux)\noutput T\n", "unknown semiring 'min_plux'"),
    ("unknown semiring string", H + "T = mxm(A, X, ¦\"plus_timez\")\noutput T\n", "unknown semiring 'plus_timez'"),
    ("unknown monoid", H + "T = reduce(X, ¦plux)\noutput T\n", "unknown monoid 'plux'"),
    ("unknown axis", H + "T = reduce(X, plus, ¦diagonal)\noutput T\n", "unknown axis 'diagonal'"),
    ("unknown binary op", H + "T = ewise_add(X, X, ¦plux)\noutput T\n", "unknown binary operator 'plux'"),
    ("unknown unary op", H + "T = apply(X, ¦sqrtt)\noutput T\n", "unknown unary operator 'sqrtt'"),
    ("unknown apply binary", H + "T = apply(X, ¦plux, left=2)\noutput T\n", "unknown binary operator 'plux'"),
    ("unknown select", H + "T = select(A, ¦bigger)\noutput T\n", "unknown select predicate"),
    ("unknown dtype in cast", H + "T = cast(X, ¦float16)\noutput T\n", "unknown dtype 'float16'"),
    ("unknown kwarg", H + "T = mxm(A, X, ¦ring=plus_times)\noutput T\n",
     "unknown argument 'ring' of mxm() (did you mean 'semiring'?); valid arguments: a, b"),
    ("kwarg twice", H + "T = mxm(A, b=X, ¦b=X)\noutput T\n", "got b twice"),
    ("positional and kwarg", H + "T = mxm(A, X, ¦b=X)\noutput T\n", "got b twice"),
    ("too many arguments", H + "T = ¦relu(X, X)\noutput T\n", "relu() takes at most 1 arguments"),
    ("missing argument", H + "T = ¦mxm(A)\noutput T\n", "missing its argument 'b'"),
    ("semiring as expression", H + "T = mxm(A, X, ¦A @ X)\noutput T\n", "semiring name"),
    ("expression as semiring arg", H + "T = mxm(A, ¦plus_times)\noutput T\n", "unknown variable 'plus_times'"),
    ("number as axis", H + "T = reduce(X, plus, ¦3)\noutput T\n", "unknown axis"),
    ("expression as bool", H + "T = mask(X, X, complement=¦X)\noutput T\n", "is true or false"),
    ("expression as scalar", H + "T = select(A, gt, ¦X)\noutput T\n", "thunk is a number"),
    ("expression as dropout p", H + "T = dropout_mask(X, ¦X, X)\noutput T\n", "p is a number"),
    # -- structure
    ("no output", H + "T = A @ X¦\n", "no 'output' statement"),
    ("output twice", H + "T = A @ X\noutput T, ¦T\n", "T is output twice"),
    ("assign to input", H + "¦A = X\noutput A\n", "cannot assign to A"),
    ("redeclare", H + "input ¦A : sparse[n, n]\noutput A\n", "A is already defined"),
    ("declare after assign", H + "T = A @ X\ninput ¦T : dense[n, k]\noutput T\n", "T is already defined"),
    ("vector two dims", "¦input v : vector[n, n]\noutput v\n", "vector[...] takes one dim"),
    ("sparse one dim", "¦input A : sparse[n]\noutput A\n", "takes two dims"),
    ("bare literal statement", H + "T = ¦3\noutput T\n", "number literal is only allowed"),
    ("bare string", H + "T = ¦\"plus\"\noutput T\n", "string literal is only allowed"),
    ("bare boolean", H + "T = ¦true\noutput T\n", "boolean literal is only allowed"),
    ("literal matmul", H + "T = X @ ¦2\noutput T\n", "@ needs matrices on both sides"),
    ("two scalars", H + "T = ¦2 + 3\noutput T\n", "numbers alone (5 here) are only allowed as an operand"),
    # -- types and shapes
    ("inner dims differ", "input A : sparse[n, m]\ninput X : dense[k, f]\nT = ¦A @ X\noutput T\n",
     "inner dimensions differ"),
    ("ewise shapes differ", "input X : dense[n, k]\ninput Y : dense[m, k]\nT = ¦X + Y\noutput T\n",
     "shapes do not match"),
    ("fixed dims differ", "input X : dense[3, 4]\ninput Y : dense[4, 4]\nT = ¦X * Y\noutput T\n", "(3 != 4)"),
    ("bool arithmetic", "input B : sparse[n, n] bool\nT = ¦B @ B\noutput T\n", "lor_land"),
    ("bool relu", "input B : dense[n, n] bool\nT = ¦relu(B)\noutput T\n", "bool"),
    ("mask shape", "input X : dense[n, k]\ninput M : dense[k, n]\nT = ¦mask(X, M)\noutput T\n", "shape of the value"),
    ("transpose mismatch", "input A : sparse[n, m]\ninput X : dense[n, k]\nT = ¦A.T @ X.T\noutput T\n", "differ"),
    ("mxv needs vector", H + "T = ¦mxv(A, X)\noutput T\n", "vector"),
    ("select with four arguments", H + "T = ¦select(A, gt, 1, 2)\noutput T\n", "takes at most 3 arguments"),
    # -- literals
    ("escape \\N", H + "T = mxm(A, X, ¦\"\\N{foo}\")\noutput T\n", "backslash escapes are not allowed"),
    ("escape \\x", H + "T = mxm(A, X, ¦\"\\x\")\noutput T\n", "backslash escapes are not allowed"),
    ("escape at end", H + "T = mxm(A, X, ¦\"abc\\\")\noutput T\n", "backslash escapes are not allowed"),
    ("escape \\u", H + "T = reduce(X, ¦\"\\u0070lus\")\noutput T\n", "backslash escapes are not allowed"),
    ("5000-digit integer", H + "T = ¦" + "9" * 5000 + " * X\noutput T\n", "does not fit in 64 bits"),
    ("integer just over int64", H + "T = ¦9223372036854775808 * X\noutput T\n", "does not fit in 64 bits"),
    ("float overflow", H + "T = ¦1e999 * X\noutput T\n", "beyond the range of float64"),
    ("negative float overflow", H + "T = -¦1e400 * X\noutput T\n", "beyond the range of float64"),
    ("float underflow", H + "T = ¦1e-999 * X\noutput T\n", "too small for float64"),
    ("huge scalar argument", H + "T = select(A, gt, ¦1e500)\noutput T\n", "beyond the range of float64"),
    ("eye of a float", HX + "T = eye(¦1e300) @ X\noutput T\n", "a name or a whole number"),
    ("eye of 2.5", HX + "T = eye(¦2.5) @ X\noutput T\n", "a name or a whole number"),
    ("eye beyond int64", HX + "T = eye(¦99999999999999999999) @ X\noutput T\n", "does not fit in 64 bits"),
    ("eye of an expression", HX + "T = eye(¦X @ X)\noutput T\n", "a dimension"),
    ("eye of a string dim", HX + "T = eye(¦\"n m\") @ X\noutput T\n", "a dimension"),
    ("dim beyond int64", "input A : sparse[¦99999999999999999999, 3]\noutput A\n", "does not fit in 64 bits"),
    ("dim of 400 digits", "input A : sparse[3, ¦" + "1" * 400 + "]\noutput A\n", "does not fit in 64 bits"),
    ("eye dims differ", HX.replace("n, n", "3, 3") + "T = ¦eye(4) @ X\noutput T\n", "differ"),
    ("pow of matrices", H + "T = ¦X ** X\noutput T\n", ""),
    ("dropout p out of range", "input X : dense[n, k]\ninput s : dense[1, 1] int64\nT = ¦dropout_mask(X, 1.5, s)\n"
     "output T\n", "dropout"),
]


def _locate(text: str) -> tuple[str, int, int]:
    i = text.index(M)
    before = text[:i]
    return text.replace(M, "", 1), before.count("\n") + 1, i - (before.rfind("\n") + 1) + 1


def test_the_campaign_has_at_least_100_programs():
    assert len(CASES) >= 100 and len({name for name, _, _ in CASES}) == len(CASES)


@pytest.mark.parametrize("name,marked,fragment", CASES, ids=[c[0] for c in CASES])
def test_a_malformed_program_gets_one_located_message(tmp_path, capsys, name, marked, fragment):
    text, line, col = _locate(marked)
    path = tmp_path / "prog.dspla"
    path.write_text(text, encoding="utf-8")
    assert main(["check", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    first, *rest = err.rstrip("\n").split("\n")
    assert first.startswith("dspla: error: ") and all(not r.startswith("dspla") for r in rest), err
    if name in ("empty file", "only a comment", "no output"):
        assert f"prog.dspla:{line}:" in first, err          # the end of the file: no column to point at
    else:
        assert f"prog.dspla:{line}:{col}:" in first, err
    assert fragment in first, err


def test_files_that_are_not_programs(tmp_path, capsys):
    (tmp_path / "bin.dspla").write_bytes(b"input A : sparse[n, n]\n\xff\xfe\x00 garbage\n")
    assert main(["check", str(tmp_path / "bin.dspla")]) == 2
    assert "not a UTF-8 text file" in capsys.readouterr().err
    assert main(["check", str(tmp_path)]) == 2
    assert "dspla: error:" in capsys.readouterr().err
    big = tmp_path / "big.dspla"
    with open(big, "wb") as fh:   # over the 16 MB limit: refused without reading it all
        fh.write(b"#" * (17 << 20))
    assert main(["check", str(big)]) == 2
    err = capsys.readouterr().err
    assert "larger than" in err and "DSPLA_MAX_PROGRAM_BYTES" in err


def test_check_of_an_endless_file_stops():
    """``dspla check /dev/zero`` read until memory ran out: now it stops at the size limit."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "dspla.cli.main", "check", "/dev/zero"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "larger than" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("program", [
    "input X : dense[n, k]\nY = " + " + ".join(["X"] * 5000) + "\noutput Y\n",
    "input X : dense[n, k]\nY = " + "-" * 5000 + "X\noutput Y\n",
    "input X : dense[n, n]\nY = X" + ".T" * 5000 + "\noutput Y\n",
    "input X : dense[n, n]\nY = " + "(" * 3000 + "X" + ")" * 3000 + "\noutput Y\n",
    "input X : dense[n, k]\nY = " + "relu(" * 2000 + "X" + ")" * 2000 + "\noutput Y\n",
], ids=["sum-5000", "neg-5000", "transpose-5000", "parens-3000", "calls-2000"])
def test_deep_expressions_never_reach_the_recursion_limit(tmp_path, capsys, program):
    path = tmp_path / "deep.dspla"
    path.write_text(program)
    assert main(["check", str(path)]) == 0, capsys.readouterr().err
