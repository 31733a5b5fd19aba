"""User mistakes reported as user errors, with their place: unknown loop-bound dims, an input
declared twice, a loop that changes a carried value's shape, unknown keyword arguments, and
unknown algebra names in the embedded DSL."""
import inspect
import pickle

import pytest

import dspla as dp
from dspla.cli.main import main
from dspla.errors import (
    DimensionMismatch,
    DomainMismatch,
    DsplaError,
    InputError,
    Span,
    UnknownNameError,
    VerificationError,
)
from dspla.frontend.parser import parse


def _next_line() -> int:
    """The number of the caller's next line: where a one-line statement after the call sits."""
    return inspect.currentframe().f_back.f_lineno + 1


# ------------------------------------------------------------------ unknown loop-bound dims
UNKNOWN_BOUND = """input A : sparse[n, n]
input x : dense[n, 1]
while reduce_all(x) > 1 max m {
  x = A @ x
}
output x
"""


def test_a_file_loop_bound_naming_no_dim_is_rejected_at_parse_time():
    with pytest.raises(UnknownNameError) as info:
        parse(UNKNOWN_BOUND, "bad.dspla")
    assert str(info.value) == ("bad.dspla:3:29: unknown dim 'm' in the loop bound; valid dims: n\n"
                               "    while reduce_all(x) > 1 max m {\n"
                               "                                ^")


def test_dspla_check_reports_the_unknown_bound(tmp_path, capsys):
    path = tmp_path / "bound.dspla"
    path.write_text(UNKNOWN_BOUND)
    assert main(["check", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err and "KeyError" not in err
    assert "bound.dspla:3:29: unknown dim 'm' in the loop bound; valid dims: n" in err


def test_a_nested_loop_bound_is_checked_and_the_valid_dims_are_all_the_inputs():
    src = """input A : sparse[n, k]
input x : dense[k, 1]
while reduce_all(x) > 1 max 3 {
  while reduce_all(x) > 2 max q {
    x = x * 2
  }
}
output x
"""
    with pytest.raises(UnknownNameError, match=r"^bad\.dspla:4:31: unknown dim 'q' in the loop bound; "
                                               r"valid dims: k, n\n"):
        parse(src, "bad.dspla")


def test_a_dim_of_an_input_declared_after_the_loop_is_a_valid_bound():
    p = parse("input x : dense[n, 1]\nwhile reduce_all(x) > 1 max m {\n  x = x * 2\n}\n"
              "input B : sparse[m, m]\noutput x\n", "ok.dspla")
    assert [n.attr("name") for n in p.inputs] == ["x", "B"]


def test_a_bound_when_the_inputs_have_no_dim_names():
    with pytest.raises(UnknownNameError, match="unknown dim 'm' in the loop bound; there are no dims"):
        parse("input x : dense[3, 1]\nwhile reduce_all(x) > 1 max m {\n  x = x * 2\n}\noutput x\n")


def test_a_dsl_loop_bound_naming_no_dim_is_rejected_when_the_function_is_made():
    A = dp.sparse("A", ("n", "n"))
    x0 = dp.dense("x", ("n", 1))
    line = _next_line()
    (x,) = dp.while_loop(lambda x: dp.reduce_all(x) > 1, lambda x: (A @ x,), (x0,), "m")
    with pytest.raises(UnknownNameError) as info:
        dp.function({"x": x})
    e = info.value
    assert e.message == "unknown dim 'm' in the loop bound; valid dims: n"
    assert e.span.file == __file__ and e.span.line == line
    assert f"test_user_errors_more.py:{line}:" in str(e)


def test_a_dsl_loop_bound_may_be_a_dim_of_an_input_the_loop_does_not_use():
    B = dp.sparse("B", ("m", "m"))
    x0 = dp.dense("x", (4, 1))
    (x,) = dp.while_loop(lambda x: dp.reduce_all(x) > 1, lambda x: (x * 0.5,), (x0,), "m")
    f = dp.function({"x": x, "B": B})
    assert f.input_names == ["x", "B"]


# ------------------------------------------------------------------ an input declared twice
def test_a_dsl_input_declared_twice_with_two_types_is_an_input_error():
    first = _next_line()
    a = dp.sparse("A", ("n", "n"))
    second = _next_line()
    b = dp.dense("A", ("n", "n"))
    with pytest.raises(InputError) as info:
        dp.function(outputs={"C": a @ b})
    e = info.value
    assert not isinstance(e, VerificationError)
    assert e.message == (f"input 'A' is declared twice with different types: sparse[n, n] float64 "
                         f"(first at {Span(__file__, first, 9)}) and dense[n, n] float64")
    assert e.span.file == __file__ and e.span.line == second


def test_a_dsl_input_declared_twice_alike_is_one_input():
    f = dp.function(outputs={"C": dp.sparse("A", ("n", "n")) @ dp.sparse("A", ("n", "n"))})
    assert f.input_names == ["A"]


def test_a_file_input_declared_twice_is_rejected_where_it_is_redeclared():
    with pytest.raises(DsplaError) as info:
        parse("input A : sparse[n, n]\ninput A : dense[n, n]\nC = A @ A\noutput C\n", "two.dspla")
    assert str(info.value).startswith("two.dspla:2:7: A is already defined\n")


# ---------------------------------------------------------- a loop changing a carried shape
def test_a_dsl_loop_body_that_transposes_a_carried_value_is_a_shape_error():
    x0 = dp.dense("x", ("n", 1))
    with pytest.raises(DimensionMismatch) as info:
        dp.while_loop(lambda x: dp.reduce_all(x) > 1, lambda x: (x.T,), (x0,), 5)
    msg = info.value.message
    assert msg == ("while[5, 1](x): loop-carried x0 changes shape in the body: dense[n, 1] float64 before it and "
                   "dense[1, n] float64 after; a loop-carried value must keep its shape")


def test_a_file_loop_body_that_transposes_a_carried_value_is_a_shape_error():
    src = "input x : dense[n, 1]\nwhile reduce_all(x) > 1 max 5 {\n  x = x.T\n}\noutput x\n"
    with pytest.raises(DimensionMismatch) as info:
        parse(src, "t.dspla")
    assert str(info.value) == ("t.dspla:3:7: while[5, 1](x): loop-carried x changes shape in the body: "
                               "dense[n, 1] float64 before it and dense[1, n] float64 after; a loop-carried "
                               "value must keep its shape\n"
                               "      x = x.T\n"
                               "          ^^^")


def test_only_a_dtype_change_gets_the_cast_hint():
    x0 = dp.dense("x", ("n", 1))
    with pytest.raises(DomainMismatch) as info:
        dp.while_loop(lambda x: dp.reduce_all(x) > 1, lambda x: (dp.cast(x, "int64"),), (x0,), 5)
    assert info.value.message.endswith("dense[n, 1] float64 before the body and dense[n, 1] int64 after it; "
                                       "cast it (cast(x, dtype)) so both agree")
    s0, d = dp.sparse("s", ("n", 1)), dp.dense("d", ("n", 1))
    with pytest.raises(DomainMismatch) as info:
        dp.while_loop(lambda s: dp.reduce_all(s) > 1, lambda s: (s + d,), (s0,), 5)
    assert info.value.message.endswith("sparse[n, 1] float64 before the body and dense[n, 1] float64 after it")


# ------------------------------------------------------------------- unknown name wording
def test_an_unknown_keyword_argument_reads_naturally():
    with pytest.raises(UnknownNameError) as info:
        parse("input A : sparse[n, n]\nC = mxm(A, A, msk=A)\noutput C\n", "k.dspla")
    assert str(info.value).startswith("k.dspla:2:15: unknown argument 'msk' of mxm() (did you mean 'mask'?); "
                                      "valid arguments: a, b, complement, mask, semiring, structure\n")


def test_unknown_name_plurals():
    assert str(UnknownNameError("axis", "diag", ["rows", "cols"])) == "unknown axis 'diag'; valid axes: cols, rows"
    assert str(UnknownNameError("select predicate", "big", ["gt"])) == \
        "unknown select predicate 'big'; valid select predicates: gt"
    assert str(UnknownNameError("argument", "msk", ["b", "a"], context="of mxm()")) == \
        "unknown argument 'msk' of mxm(); valid arguments: a, b"
    with pytest.raises(UnknownNameError, match=r"^t\.dspla:2:21: unknown axis 'diagonal'; valid axes: all, cols, "
                                               r"rows\n"):
        parse("input X : dense[n, k]\nT = reduce(X, plus, diagonal)\noutput T\n", "t.dspla")


def test_an_unknown_name_error_copies_and_pickles_whole():
    e = UnknownNameError("semiring", "plus_tims", ["plus_times"])
    moved = e.at(Span("f.py", 3, 5))
    assert type(moved) is UnknownNameError and moved.valid == ["plus_times"] and moved.span.line == 3
    assert str(moved) == "f.py:3:5: unknown semiring 'plus_tims' (did you mean 'plus_times'?); valid semirings: " \
                         "plus_times"
    back = pickle.loads(pickle.dumps(moved))
    assert type(back) is UnknownNameError and str(back) == str(moved) and back.name == "plus_tims"


# ------------------------------------------------- unknown algebra names in the Python DSL
A = dp.sparse("A", ("n", "n"))


def _raised_at(fn) -> UnknownNameError:
    with pytest.raises(UnknownNameError) as info:
        fn()
    return info.value


@pytest.mark.parametrize("what,call,kind,meant", [
    ("semiring", lambda: dp.mxm(A, A, "plus_tims"), "semiring 'plus_tims'", "plus_times"),
    ("monoid", lambda: dp.reduce_rows(A, "plux"), "monoid 'plux'", "plus"),
    ("unary", lambda: dp.apply(A, "sqrtt"), "unary operator 'sqrtt'", "sqrt"),
    ("binary", lambda: dp.ewise_add(A, A, "plux"), "binary operator 'plux'", "plus"),
    ("bound binary", lambda: dp.apply(A, "plux", left=2), "binary operator 'plux'", "plus"),
    ("accum", lambda: dp.update(A, A, accum="plux"), "binary operator 'plux'", "plus"),
    ("select", lambda: dp.select(A, "offdiagonal"), "select predicate 'offdiagonal'", "offdiag"),
    ("dtype", lambda: dp.cast(A, "float46"), "dtype 'float46'", "float64"),
])
def test_an_unknown_dsl_name_says_where_the_script_wrote_it(what, call, kind, meant):
    line = inspect.getsourcelines(call)[1]   # the parametrize row the lambda is on
    e = _raised_at(call)
    assert e.message.startswith(f"unknown {kind} (did you mean '{meant}'?); valid ")
    assert e.span is not None and e.span.file == __file__ and e.span.line == line
    assert str(e).startswith(f"{e.span}: unknown {kind}")


def test_a_shape_mismatch_names_the_shapes_as_written():
    """Whole shapes were printed as Python tuples: (('n', 3) != ('n', 'n')). (Against [n, n],
    [n, 3] binds n = 3 now: a size binds a symbol it meets; two sizes do not.)"""
    Y, A = dp.dense("Y", ("n", 3)), dp.sparse("A", ("n", 4))
    for make in (lambda: dp.update(Y, A), lambda: dp.mask(Y, A)):
        with pytest.raises(DimensionMismatch, match=r"Y is dense\[n, 3\] float64 and A is sparse\[n, 4\] float64 "
                                                    r"\(\[n, 3\] != \[n, 4\]\)"):
            make()
