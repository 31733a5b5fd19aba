"""The expression-file language: parsing, both frontends giving the same IR, and the errors."""
import re

import numpy as np
import pytest

import dspla as dp
from dspla.errors import DimensionMismatch, DomainMismatch, DsplaError, DsplaSyntaxError, UnknownNameError
from dspla.frontend.parser import parse

GCN = """# gcn_layer.dspla
input  A : sparse[n, n]
input  X : dense[n, f]
param  W : dense[f, 7]          # params are inputs the trainer may update
Z = A @ X @ W
T = mxm(A, X, plus_second)
H = relu(Z)
output H, T
"""


def test_file_and_embedded_dsl_build_the_same_ir():
    p = parse(GCN, "gcn.dspla")
    A = dp.sparse("A", ("n", "n"))
    X = dp.dense("X", ("n", "f"))
    W = dp.param("W", ("f", 7))
    f = dp.function(outputs={"H": dp.relu(A @ X @ W), "T": dp.mxm(A, X, dp.semiring.plus_second)})
    assert f.source_program == p
    assert f.program == dp.Function(p).program
    # and a different program is not equal
    g = dp.function(outputs={"H": dp.relu(A @ X @ W), "T": dp.mxm(A, X, "plus_first")})
    assert g.source_program != p


def test_declarations_dtypes_vectors_and_params():
    p = parse("input A : sparse[n, m] int64\ninput v : vector[m] int64\nparam b : dense[1, 3] float32\n"
              "y = mxv(A, v, min_plus)\noutput y\n")
    ins = {n.attr("name"): n for n in p.inputs}
    assert str(ins["A"].type) == "sparse[n, m] int64"
    assert str(ins["v"].type) == "dense vector[m] int64" and ins["v"].type.shape == ("m", 1)
    assert ins["b"].attr("role") == "param" and str(ins["b"].type) == "dense[1, 3] float32"
    assert str(dict(p.outputs)["y"].type) == "dense vector[n] int64"


def test_expression_forms():
    src = """input A : sparse[n, n]
input X : dense[n, k]
S = 2.0 * X - X / 3 + (-X) ** 2
B = ewise_add(A, A.T, max) * ewise_mult(A, A, "min")
M = mask(X, X, complement=true, structure=false)
Q = select(A, ">", 0.5) + select(A, tril, -1)
R = reduce(A, min, cols) @ X
L = log_softmax(softmax(X)) + apply(X, "times", left=2) + apply(X, sigmoid)
I = eye(n) + cast(A, float32)
output S, B, M, Q, R, L, I
"""
    p = parse(src, "forms.dspla")
    outs = dict(p.outputs)
    assert str(outs["R"].type) == "dense[1, k] float64"
    assert str(outs["I"].type) == "sparse[n, n] float64"
    assert outs["S"].name == "S"


@pytest.mark.parametrize("name", ["input_x", "params", "inputs", "truex", "falsely", "sparse_A", "densest",
                                  "vectors", "float64s", "int8x", "boolean", "paramW"])
def test_a_name_may_begin_with_a_keyword(name):
    """A keyword ends where a name would go on: `input_x = A` read as `input` then `_x` ('expected
    ':'), and `y = truex` as `true` then `x`."""
    p = parse(f"input {name} : sparse[n, n]\n{name}2 = {name}\noutput {name}2\n", "k.dspla")
    assert [k for k, _ in p.outputs] == [f"{name}2"] and p.inputs[0].attr("name") == name
    p = parse(f"input A : sparse[n, n]\n{name} = A\noutput {name}\n", "k.dspla")
    assert [k for k, _ in p.outputs] == [name]


def test_a_keyword_run_into_a_name_is_not_read_as_both():
    with pytest.raises(DsplaSyntaxError, match="k.dspla:1:8"):
        parse("inputA : sparse[n, n]\noutput A\n", "k.dspla")


def test_line_continuation_comments_and_blank_lines():
    p = parse("\n\n# c\ninput A : sparse[n, n]   # trailing\n\nB = A @ \\\n    A\noutput B\n\n")
    assert dict(p.outputs)["B"].op.value == "mxm"


@pytest.mark.parametrize("src, exc, needles", [
    ("input A : sparse[n, n]\nB = A @ \noutput B\n", DsplaSyntaxError, ["bad.dspla:2:9", "unexpected end of line",
                                                                        "expected"]),
    ("input A : sparse[n, n]\nB = A $ A\noutput B\n", DsplaSyntaxError, ["bad.dspla:2:7", "'$'"]),
    ("input A : sparse[n, n]\nB = mxm(A, A, min_plux)\noutput B\n", UnknownNameError,
     ["bad.dspla:2:15", "min_plux", "min_plus", "plus_times"]),
    ("input A : sparse[n, n]\nB = relux(A)\noutput B\n", UnknownNameError, ["bad.dspla:2:5", "relux", "relu"]),
    ("input A : sparse[n, n]\nB = A @ C\noutput B\n", UnknownNameError, ["bad.dspla:2:9", "variable 'C'"]),
    ("input A : sparse[n, n]\ninput X : dense[f, 7]\nB = A @ X\noutput B\n", DimensionMismatch,
     ["bad.dspla:3:5", "sparse[n, n]", "dense[f, 7]", "n != f", "B = A @ X\n        ^^^^^"]),
    ("input A : sparse[n, n] bool\nB = A @ A\noutput B\n", DomainMismatch, ["bad.dspla:2:5", "plus_times", "bool"]),
    ("input A : sparse[n, n]\nB = reduce_rows(A, minus)\noutput B\n", UnknownNameError, ["monoid", "minus", "plus"]),
    ("input A : sparse[n, n]\nB = A\n", DsplaError, ["no 'output'"]),
    ("input A : sparse[n, n]\ninput A : dense[n, n]\noutput A\n", DsplaError, ["bad.dspla:2:7", "already defined"]),
    ("input A : sparse[n, n]\nA = A @ A\noutput A\n", DsplaError, ["cannot assign to A"]),
    ("input A : sparse[n, n]\nB = mxm(A)\noutput B\n", DsplaError, ["missing its argument 'b'"]),
    ("input A : sparse[n, n]\nB = mxm(A, A, semiring=plus_times, foo=1)\noutput B\n", UnknownNameError,
     ["unknown argument 'foo' of mxm(); valid arguments: a, b, complement, mask, semiring, structure"]),
    ("input A : sparse[n, n]\nB = __import__(\"os\")\noutput B\n", UnknownNameError, ["function '__import__'"]),
])
def test_errors_point_at_the_source(src, exc, needles):
    with pytest.raises(exc) as info:
        parse(src, "bad.dspla")
    msg = str(info.value)
    for needle in needles:
        assert needle in msg, f"{needle!r} not in {msg!r}"


def test_nothing_is_evaluated_as_python(monkeypatch):
    import builtins
    called = []
    monkeypatch.setattr(builtins, "eval", lambda *a, **k: called.append(a))
    monkeypatch.setattr(builtins, "exec", lambda *a, **k: called.append(a))
    parse('input A : sparse[n, n]\nB = select(A, ">", 1e3)\noutput B\n')
    assert called == []


@pytest.mark.parametrize("text,want", [
    ("X * (0.85 * 0.5)", lambda x: x * 0.425),
    ("X * (1 / 2) + 2 ** -1 - (3 - 1) * 4", lambda x: x * 0.5 + 0.5 - 8),
    ("X / (2 + 2)", lambda x: x / 4),
    ("X * -(1 + 2)", lambda x: x * -3),
    ("X + 2 ** 10", lambda x: x + 1024),
    ("apply(X, times, 1 / 4)", lambda x: x * 0.25),
    ("X / (0.0 - 0.0)", lambda x: np.full_like(x, np.inf)),    # IEEE: 0.0 - 0.0 is +0.0
    ("X / (0.0 * -1.0)", lambda x: np.full_like(x, -np.inf)),  # and 0.0 * -1.0 is -0.0
])
def test_arithmetic_on_numbers_alone_is_folded(text, want):
    """An operand made of numbers only is computed as Python computes it (1 / 2 is 0.5),
    floats by IEEE rules (a division by zero gives inf as on a matrix's entries)."""
    from dspla.frontend.parser import parse
    f = dp.Function(parse(f"input X : dense[n, 1]\nY = {text}\noutput Y\n", "p.dspla"))
    x = np.array([[1.0], [3.0]])
    got = f(X=x)["Y"].to_numpy()
    with np.errstate(divide="ignore"):
        np.testing.assert_array_equal(got, want(x))


@pytest.mark.parametrize("text,message,col", [
    ("X * (2 ** 70)", "2 ** 70 does not fit in 64 bits", 10),
    ("X * (9223372036854775807 + 1)", "9223372036854775808 does not fit in 64 bits", 10),
    ("2 + 1", "numbers alone (3 here) are only allowed as an operand", 5),
])
def test_folding_refuses_what_does_not_fit_at_its_position(text, message, col):
    from dspla.frontend.parser import parse
    with pytest.raises(DsplaError, match=re.escape(message)) as e:
        parse(f"input X : dense[n, 1]\nY = {text}\noutput Y\n", "p.dspla")
    assert f"p.dspla:2:{col}" in str(e.value)


def test_a_folded_operand_may_nest_deep():
    from dspla.frontend.parser import parse
    depth = 5000
    text = "(" * depth + "1" + " + 1)" * depth
    f = dp.Function(parse(f"input X : dense[n, 1]\nY = X * {text}\noutput Y\n", "p.dspla"))
    assert f(X=np.ones((2, 1)))["Y"].to_numpy()[:, 0].tolist() == [depth + 1.0] * 2
