"""f.explain(np=P, **inputs) binds symbolic dims from the inputs given and names the missing ones
the way the caller can give them: dims={...} from Python, --dim from the command line."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

import dspla as dp


def _f():
    A, X, W = dp.sparse("A", ("n", "n")), dp.dense("X", ("n", "f")), dp.param("W", ("f", 7))
    return dp.function(outputs={"H": dp.relu(A @ X @ W)})


def test_dims_come_from_the_inputs_given():
    a = sp.random_array((120, 120), density=0.05, random_state=0, format="csr")
    text = _f().explain(np=2, A=a, X=np.ones((120, 16)))
    assert "dim n: 120 indices" in text


def test_missing_dims_are_named_in_python_terms():
    a = sp.random_array((120, 120), density=0.05, random_state=0, format="csr")
    with pytest.raises(dp.InputError) as e:
        _f().explain(np=4, A=a)
    assert str(e.value) == ("cannot plan without a size for dimension 'f' (of input 'X'): pass X=..., or "
                            'dims={"f": SIZE}')
    assert "--dim" not in str(e.value)
    assert "dim n: 120" in _f().explain(np=4, A=a, dims={"f": 16})


def test_missing_dims_are_named_in_command_line_terms(tmp_path):
    scipy.io.mmwrite(tmp_path / "a.mtx", sp.random_array((50, 50), density=0.1, random_state=0, format="csr"))
    prog = Path(__file__).resolve().parents[2] / "examples" / "gcn_layer.dspla"
    r = subprocess.run([sys.executable, "-m", "dspla.cli.main", "explain", str(prog), "--np", "2", "-i",
                        f"A={tmp_path / 'a.mtx'}"], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip() == ("dspla: error: cannot plan without a size for dimension 'f' (of input 'X'): give "
                                "-i X=FILE, or --dim f=SIZE")


def test_the_reason_for_a_plan_and_the_kind_of_its_operand():
    """--plan p2p1d is 'requested', not 'the only plan for this product' (pick looked at the one
    candidate before the option); a plan that cannot run is an error naming why (it was replaced
    by another silently); a sparse right operand is shown sparse in the product's header (it was
    always 'dense')."""
    import scipy.sparse as sp
    a = sp.random_array((60, 60), density=0.1, random_state=2, format="csr")
    s = sp.random_array((60, 3), density=0.2, random_state=3, format="csr")
    A, S = dp.sparse("A", ("n", "n")), dp.sparse("S", ("n", 3))
    f = dp.function(outputs={"T": A @ S})
    chosen = f.explain(np=2, json=True, plan="p2p1d", A=a, S=s)["products"][0]
    assert chosen["why"] == "requested with --plan p2p1d"
    text = f.explain(np=2, plan="p2p1d", A=a, S=s)
    assert "[sparse[60x60] x sparse[60x3]]" in text
    with pytest.raises(dp.DsplaError, match=r"^plan 2d, asked for T = mxm\[plus_times\]\(A, S\), cannot run it "
                                            r"on 3 processes: 2d needs a square process count"):
        f.explain(np=3, json=True, plan="2d", A=a, S=s)
