"""Source spans of DSL expressions (frontend/span.py): the user's line when a user frame is
below dspla's (a program dspla builds itself under ``python -m``, with only the interpreter's
frames below, points at the dspla line instead: checked through ``dspla demo`` in
tests/models/test_cli_train.py)."""
import inspect

import dspla as dp


def test_a_user_expression_points_at_the_users_line():
    x = dp.dense("x", ("n", 1))
    y, line = x + x, inspect.currentframe().f_lineno
    assert y.node.span.file == __file__ and y.node.span.line == line
    assert y.node.span.col == 15 and y.node.span.text.strip().startswith("y, line = x + x")


def test_a_loop_points_at_the_users_while_loop_call():
    r0 = dp.dense("r", ("n", 1))

    def body(r):
        return (r * 2.0,)
    (r,), _ = dp.while_loop(lambda r: dp.reduce_all(r) < 10.0, body, (r0,), 5, count=True)
    line = inspect.currentframe().f_lineno - 1   # (the line above)
    assert r.node.span.file == __file__ and r.node.span.line == line
