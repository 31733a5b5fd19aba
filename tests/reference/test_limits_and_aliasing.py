"""X @ X (one matrix on both sides) and the memory check of eye(n)."""
from __future__ import annotations

import numpy as np
import pytest

import dspla as dp
from dspla.frontend.parser import parse
from dspla.function import Function


def test_a_matrix_times_itself():
    X = dp.dense("X", ("n", "n"))
    x = np.arange(16.0).reshape(4, 4)
    np.testing.assert_allclose(dp.function(outputs={"Y": X @ X})(X=x)["Y"].to_numpy(), x @ x)
    np.testing.assert_allclose(dp.function(outputs={"Y": dp.mxm(X, X, "min_plus")})(X=x)["Y"].to_numpy(),
                               (x[:, :, None] + x[None, :, :]).min(axis=1))


def test_an_identity_too_large_for_the_limit_is_refused_where_it_was_written(monkeypatch):
    monkeypatch.setenv("DSPLA_MAX_INPUT_BYTES", "1G")
    f = Function(parse("input X : dense[n, 2]\nY = X + 1\nZ = eye(300000000)\noutput Y, Z\n", "prog.dspla"))
    with pytest.raises(dp.DsplaError, match=r"prog.dspla:3:5: the 300000000 x 300000000 identity matrix needs "
                                            r"11.2 GB, more than the 1.0 GB allowed \(DSPLA_MAX_INPUT_BYTES\)"):
        f(X=np.ones((3, 2)))
