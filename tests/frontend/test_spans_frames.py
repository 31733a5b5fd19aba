"""Source spans of DSL expressions (frontend/span.py): the user's line when a user frame is
below dspla's (a program dspla builds itself under ``python -m``, with only the interpreter's
frames below, points at the dspla line instead: checked through ``dspla demo`` in
tests/models/test_cli_train.py)."""
import dspla as dp


def test_a_user_expression_points_at_the_users_line():
    x = dp.dense("x", ("n", 1))
    y = x + x
    assert y.node.span.file == __file__ and y.node.span.line == 10   # (the line above)
    assert y.node.span.col == 9 and y.node.span.text.strip() == "y = x + x"


def test_a_loop_points_at_the_users_while_loop_call():
    r0 = dp.dense("r", ("n", 1))

    def body(r):
        return (r * 2.0,)
    (r,), _ = dp.while_loop(lambda r: dp.reduce_all(r) < 10.0, body, (r0,), 5, count=True)
    assert r.node.span.file == __file__ and r.node.span.line == 20   # (the line above)
