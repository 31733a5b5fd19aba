"""The Python Trainer takes a dp.function(...) step as well as its Program, and says what it
cannot take."""
from __future__ import annotations

import math

import pytest

import dspla as dp
from dspla.errors import DsplaError
from dspla.models import TrainConfig, Trainer, gcn_norm, load_node_data


def _step():
    A, X = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "f"))
    Y, T = dp.dense("Y", ("n", "c")), dp.dense("T", ("n", 1))
    W = dp.param("W", ("f", "c"))
    logits = gcn_norm(A) @ (X @ W)
    loss = -dp.reduce_all(dp.log_softmax(logits) * Y * T)
    return dp.function({"loss": loss, "logits": logits})


def test_trainer_takes_a_function():
    data = load_node_data("sbm", nodes=2000, classes=3, feature_dim=8)
    # before: AttributeError 'Function' object has no attribute 'outputs'
    r = Trainer(_step(), data, TrainConfig(epochs=2, progress=False)).fit()
    assert r["epochs_run"] == 2 and all(math.isfinite(e["loss"]) for e in r["epochs"])
    assert r["dropout_applied"] == 0.0   # the step has no dropout_mask


def test_trainer_refuses_what_is_not_a_step_program():
    with pytest.raises(DsplaError, match="Trainer takes a step program .* got str"):
        Trainer("examples/gcn.dspla")
