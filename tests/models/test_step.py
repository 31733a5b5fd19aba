"""The GCN step program: Â against scipy, outputs against a numpy re-implementation, gradients
against central finite differences (float64), the three spellings of the program agree."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import dspla as dp
from dspla.frontend.parser import parse_file
from dspla.models import eval_program, gcn_norm, gcn_norm_scipy, gcn_step, set_dropout, without_dropout
from dspla.models.program import StepProgramError, check_step, training_program

from . import oracle
from harness import central_differences

ROOT = Path(__file__).resolve().parents[2]
GCN_FILE = ROOT / "examples" / "gcn.dspla"


def _example_py():
    spec = importlib.util.spec_from_file_location("gcn_example", ROOT / "examples" / "gcn.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("directed", [False, True])
def test_gcn_norm_matches_scipy(directed):
    rng = np.random.default_rng(1)
    A = sp.random_array((40, 40), density=0.08, random_state=rng, format="csr")
    A.data[:] = rng.integers(1, 4, A.nnz)          # weighted, some self loops, some empty rows
    if not directed:
        A = sp.csr_array(A + A.T)
    a = dp.sparse("A", ("n", "n"))
    got = dp.function({"Ah": gcn_norm(a)})(A=A)["Ah"].to_scipy().toarray()
    want = gcn_norm_scipy(A).toarray()
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-15)
    assert got.shape == (40, 40) and np.all(np.diag(got) > 0)   # every node keeps its self loop


def test_three_spellings_are_one_program():
    from_file = parse_file(str(GCN_FILE))
    assert from_file == gcn_step().source_program
    assert from_file == _example_py().gcn_step().source_program
    info = check_step(from_file)
    assert info == {"params": ["W1", "W2"], "uses_seed": True}


@pytest.mark.parametrize("directed,sparse_x", [(False, True), (True, True), (True, False)])
def test_step_matches_numpy_without_dropout(directed, sparse_x):
    case = oracle.random_problem(directed=directed, seed=3, sparse_x=sparse_x)
    f = dp.Function(set_dropout(gcn_step(sparse_features=sparse_x).source_program, 0.0))
    assert f.program.outputs == set_dropout(f.program, 0.0).outputs
    got = f(**case, seed=np.array([[7]]))
    want = oracle.step(**case)
    for k in ("loss", "logits", "dW1", "dW2"):
        np.testing.assert_allclose(got[k].to_numpy(fill=0.0), np.atleast_2d(want[k]), rtol=1e-11, atol=1e-13,
                                   err_msg=k)


@pytest.mark.parametrize("directed", [False, True])
def test_gradients_against_finite_differences(directed):
    """Every entry of dW1 and dW2, with dropout on (a fixed seed fixes the masks)."""
    case = oracle.random_problem(n=16, f=5, h=3, c=3, directed=directed, seed=11)
    f = gcn_step(p=0.3)
    seed = np.array([[42]])
    out = f(**case, seed=seed)
    assert out["dW1"].is_full and out["dW2"].is_full

    def loss(**w):
        return f(**{**case, **w}, seed=seed)["loss"].to_numpy()[0, 0]

    for name in ("W1", "W2"):
        num = central_differences(lambda V, name=name: loss(**{name: V}), case[name])
        got = out["d" + name].to_numpy()
        np.testing.assert_allclose(got, num, rtol=1e-6, atol=1e-9, err_msg=name)
        assert np.abs(got).max() > 1e-4   # not vacuous


def test_dropout_masks_change_with_seed_and_eval_removes_them():
    case = oracle.random_problem(seed=5)
    f = gcn_step(p=0.5)
    a, b = (f(**case, seed=np.array([[s]]))["loss"].to_numpy()[0, 0] for s in (2, 4))
    assert a != b
    ev = eval_program(f.source_program)
    assert not any(n.op.value == "dropout_mask" for n in ev.toposort())
    assert not any(n.op.value in ("dropout_mask", "apply") and n.args[0].op.value == "input"
                   for n in ev.toposort())                       # X * (mask + 0 X) folded to X
    assert not any(n.op.value == "dropout_mask" for n in without_dropout(f.source_program).toposort())
    want = oracle.step(**case)
    ef = dp.Function(ev)
    got = ef(**{k: case[k] for k in ef.input_names})
    np.testing.assert_allclose(got["logits"].to_numpy(), want["logits"], rtol=1e-12)


def test_training_program_outputs():
    prog = training_program(parse_file(str(GCN_FILE)))
    assert [k for k, _ in prog.outputs] == ["loss", "dW1", "dW2", "eval_logits"]


def test_convention_errors_name_what_is_missing(tmp_path):
    p = tmp_path / "bad.dspla"
    p.write_text("input A : sparse[n, n]\ninput X : dense[n, f]\nparam W : dense[f, 3]\nZ = A @ X @ W\n"
                 "output Z\n")
    with pytest.raises(StepProgramError, match="no input 'Y'.*no output 'loss'.*no output 'dW'"):
        check_step(parse_file(str(p)), str(p))
