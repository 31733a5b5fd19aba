"""User-defined operators for `dspla run/check/explain --plugin examples/tropical_plugin.py`.

The tropical (min, +) semiring from two plain Python functions, compiled with numba: the same
algebra as the built-in min_plus, written as a user would write their own. A .dspla file then
declares `semiring tropical = tmin.tplus` (see examples/tropical.dspla).
"""
import math

import dspla as dp


def tmin(x, y):
    return x if x < y else y


def tplus(x, y):
    return x + y


dp.monoid.define("tmin", tmin, identity=math.inf)
dp.binary.define("tplus", tplus, associative=True, commutative=True, distributes_over=("tmin",))
