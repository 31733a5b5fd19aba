"""The counts and displacements both communicators hand a v-collective (runtime/comm/__init__.py),
made once per counts; the oracle is the running sum written out by hand."""
import numpy as np

from dspla.runtime.comm import layout as _layout


def test_displacements_are_the_running_sum_of_the_counts_before():
    assert _layout([3, 0, 5, 2]) == ((3, 0, 5, 2), (0, 3, 3, 8))
    assert _layout(np.array([4, 4], dtype=np.int64)) == ((4, 4), (0, 4))
    assert _layout((7,)) == ((7,), (0,))


def test_the_same_counts_give_the_same_layout_object():
    # (what makes a loop's repeated allreduce cheap: nothing is rebuilt)
    first = _layout((9, 9, 9))
    assert _layout([9, 9, 9]) is first and _layout(np.array([9, 9, 9])) is first
    assert all(type(x) is int for part in first for x in part)
