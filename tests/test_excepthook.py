"""A dspla error that ends a user's script is one message at the script's line (no traceback of
dspla's frames), once per job under mpiexec; the user's own exceptions keep Python's traceback;
DSPLA_DEBUG=1 shows everything."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

MISSING = """import numpy as np
import dspla as dp
A = dp.sparse("A", ("n", "n"))
X = dp.dense("X", ("n", "f"))
f = dp.function(outputs={"T": A @ X})
out = f(A=np.eye(3))
"""

TYPO = """import dspla as dp
A = dp.sparse("A", ("n", "n"))
T = dp.mxm(A, A, "plus_tims")
"""

OWN = """import dspla as dp
raise ValueError("the user's own")
"""


def _run(tmp_path, code, *launcher, env=None):
    (tmp_path / "script.py").write_text(code)
    return subprocess.run([*map(str, launcher), sys.executable, "script.py"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


def test_an_error_in_a_call_is_one_message_at_the_callers_line(tmp_path):
    r = _run(tmp_path, MISSING)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        "dspla: error: script.py:6: missing input 'X'; the program takes A: sparse[n, n] float64, X: dense[n, f] "
        "float64", "    out = f(A=np.eye(3))"]


def test_an_error_with_a_position_keeps_it_and_its_caret(tmp_path):
    r = _run(tmp_path, TYPO)
    lines = r.stderr.splitlines()
    assert r.returncode == 1 and len(lines) == 3 and "Traceback" not in r.stderr
    assert lines[0].startswith("dspla: error: script.py:3:5: unknown semiring 'plus_tims' (did you mean "
                               "'plus_times'?); valid semirings: ")
    assert lines[1] == '    T = dp.mxm(A, A, "plus_tims")'


def test_the_users_own_exception_and_debug_keep_pythons_traceback(tmp_path):
    r = _run(tmp_path, OWN)
    assert r.returncode == 1 and r.stderr.startswith("Traceback") and "ValueError: the user's own" in r.stderr
    r = _run(tmp_path, MISSING, env={"DSPLA_DEBUG": "1"})
    assert r.returncode == 1 and r.stderr.startswith("Traceback") and "dspla/function.py" in r.stderr


@pytest.mark.mpi
@pytest.mark.parametrize("code,says", [(MISSING, "script.py:6: missing input 'X'"),
                                       (TYPO, "script.py:3:5: unknown semiring 'plus_tims'")])
def test_under_mpiexec_the_message_is_said_once(tmp_path, code, says):
    mpiexec = Path(sys.executable).parent / "mpiexec"
    r = _run(tmp_path, code, mpiexec, "-n", "2", env={"MPIR_CVAR_POLLS_BEFORE_YIELD": "1"})
    assert r.returncode != 0
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("dspla: error")]
    assert len(errors) == 1 and says in errors[0], r.stderr
    assert "Traceback" not in r.stderr
