"""Semirings declared in files, and user operators from --plugin modules."""
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from dspla.cli.main import main
from dspla.errors import DsplaError, UnknownNameError
from dspla.formats.results import read_results
from dspla.frontend.parser import parse

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "examples" / "tropical_plugin.py"
HEAD = "input A : sparse[n, n]\ninput X : dense[n, k]\n"


def test_a_file_declares_its_semiring_from_builtin_parts():
    prog = parse(HEAD + "semiring trop = min.plus\nT = mxm(A, X, trop)\noutput T\n", "t.dspla")
    sr = prog.outputs[0][1].attr("semiring")
    assert (sr.name, sr.monoid.name, sr.mult.name) == ("trop", "min", "plus")


@pytest.mark.parametrize("line,err,where", [
    ("semiring trop = mni.plus", UnknownNameError, "t.dspla:3:17: unknown monoid 'mni'"),
    ("semiring trop = min.plsu", UnknownNameError, "t.dspla:3:21: unknown binary operator 'plsu'"),
    ("semiring min_plus = min.plus", DsplaError, "t.dspla:3:10: semiring min_plus is already defined"),
    ("semiring trop = min", DsplaError, "t.dspla:3"),
])
def test_file_semiring_errors_say_where(line, err, where):
    with pytest.raises(err) as e:
        parse(HEAD + line + "\nT = mxm(A, X, min_plus)\noutput T\n", "t.dspla")
    assert where in str(e.value)


def test_a_files_semiring_is_its_own():
    """Two files may each declare a `trop` of their own: nothing is registered globally."""
    a = parse(HEAD + "semiring trop = min.plus\nT = mxm(A, X, trop)\noutput T\n", "a.dspla")
    b = parse(HEAD + "semiring trop = max.plus\nT = mxm(A, X, trop)\noutput T\n", "b.dspla")
    assert a.outputs[0][1].attr("semiring").monoid.name == "min"
    assert b.outputs[0][1].attr("semiring").monoid.name == "max"


def test_run_with_a_plugin(tmp_path, capsys):
    rng = np.random.default_rng(2)
    A = sp.random_array((20, 20), density=0.2, random_state=rng, format="coo")
    X = rng.random((20, 3))
    scipy.io.mmwrite(tmp_path / "a.mtx", A)
    np.save(tmp_path / "x.npy", X)
    args = ["run", str(ROOT / "examples" / "tropical.dspla"), "-i", f"A={tmp_path / 'a.mtx'}",
            "-i", f"X={tmp_path / 'x.npy'}", "--out", str(tmp_path / "o.npz")]
    assert main(args + ["--plugin", str(PLUGIN)]) == 0
    vals, pres = read_results(tmp_path / "o.npz")["T"]
    Ap = np.zeros(A.shape, bool)
    Ap[A.row, A.col] = True
    want = np.where(Ap[:, :, None], A.toarray()[:, :, None] + X[None], np.inf).min(axis=1)
    assert np.array_equal(pres, Ap.any(axis=1)[:, None].repeat(3, axis=1))
    assert np.array_equal(vals[pres], want[pres])


def test_plugin_errors(tmp_path, capsys):
    prog = str(ROOT / "examples" / "tropical.dspla")
    assert main(["check", prog, "--plugin", str(tmp_path / "none.py")]) == 2
    assert "--plugin: no such file" in capsys.readouterr().err
    (tmp_path / "bad.py").write_text("raise RuntimeError('oops')\n")
    assert main(["check", prog, "--plugin", str(tmp_path / "bad.py")]) == 2
    err = capsys.readouterr().err
    assert "bad.py failed: RuntimeError: oops" in err and "Traceback" not in err
