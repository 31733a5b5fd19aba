"""A calibration replaces the one in use only when its fit is good (calibration/quality.py);
``dspla calibrate`` says why it refused, keeps the previous file, and saves with --force."""
from __future__ import annotations

import json
import types
from importlib import resources

import pytest

from dspla.calibration.quality import assess, quality, warnings
from dspla.cli.calibrate import _report_and_save
from dspla.costmodel import Coefficients
from dspla.errors import DsplaError


def _shipped():
    d = json.loads(resources.files("dspla").joinpath("data", "calibration_default.json").read_text())
    return d["coefficients"], d["fits"]


def _plans(r2=0.9, median=0.1, pinned=()):
    return {"samples": 40, "before": {"within_0.67_1.5": 0.7, "median_abs_log_ratio": 0.25},
            "after": {"r2": r2, "within_0.67_1.5": 0.95, "median_abs_log_ratio": median}, "pinned": list(pinned)}


def test_the_shipped_calibration_passes():
    coefs, fits = _shipped()
    assert assess(coefs, fits) == []


@pytest.mark.parametrize("change,why", [
    (lambda c, f: f.update(plans=_plans(r2=-0.23)), "R^2(log) = -0.23"),
    (lambda c, f: f.update(plans=_plans(median=0.9)), "off by a median factor of 2.46"),
    (lambda c, f: c.update(gamma=0.0), "gamma = 0.0"),
    (lambda c, f: (f.pop("plans"), f["spmm"].update(r2=-0.2)), "the spmm microbenchmark fit has R^2(log) = -0.20"),
])
def test_bad_fits_are_refused_with_the_reason(change, why):
    coefs, fits = _shipped()
    change(coefs, fits)
    reasons = assess(coefs, fits)
    assert any(why in r for r in reasons), reasons


def _result(gamma=2e-10, plans=None):
    c = Coefficients(gamma=gamma, P=2, source="test")
    fits = {"spmm": {"coefficients": {"kappa": 1e-5, "gamma": gamma, "delta": 1e-9}, "r2": 0.9,
                     "median_rel_residual": 0.2, "max_rel_residual": 0.5, "samples": 10},
            "plans": plans or _plans()}
    return c, fits


def test_a_refused_fit_keeps_the_previous_file_and_force_saves(tmp_path, capsys):
    path = tmp_path / "cal.json"
    path.write_text('{"previous": true}')
    args = types.SimpleNamespace(out=str(path), force=False)
    with pytest.raises(DsplaError, match=f"calibration not saved.*R\\^2\\(log\\) = -0.23.*Keeping {path}.*--force"):
        _report_and_save(_result(plans=_plans(r2=-0.23)), str(path), args, 1.0)
    assert json.loads(path.read_text()) == {"previous": True}
    args.force = True
    _report_and_save(_result(plans=_plans(r2=-0.23)), str(path), args, 1.0)
    assert "coefficients" in json.loads(path.read_text())
    assert "despite" in capsys.readouterr().out


def test_a_good_fit_is_saved(tmp_path, capsys):
    path = tmp_path / "cal.json"
    _report_and_save(_result(), str(path), types.SimpleNamespace(out=str(path), force=False), 1.0)
    assert json.loads(path.read_text())["coefficients"]["gamma"] == 2e-10
    assert f"wrote {path}" in capsys.readouterr().out


def test_a_marginal_fit_is_saved_with_a_warning_and_each_coefficients_quality(tmp_path, capsys):
    """Coefficients at the refit's bounds (the plan runs and the microbenchmarks disagree, as on a
    loaded machine) no longer refuse a fit whose predictions pass: it is saved, with a warning."""
    pinned = ("gamma", "delta", "kappa", "alpha_coll")
    coefs, fits = _shipped()
    fits["plans"]["pinned"] = list(pinned)
    assert assess(coefs, fits) == []
    assert len(warnings(fits)) == 1 and "4 coefficients ended at the refit's bounds" in warnings(fits)[0]
    path = tmp_path / "cal.json"
    c, f = _result(plans=_plans(pinned=pinned))
    _report_and_save((c, f), str(path), types.SimpleNamespace(out=str(path), force=False), 1.0)
    assert json.loads(path.read_text())["coefficients"]["gamma"] == 2e-10
    out, err = capsys.readouterr()
    assert f"wrote {path}" in out and "despite" not in out
    assert "dspla: warning: 4 coefficients ended at the refit's bounds" in err and "95% of the plan runs" in err
    # the quality table: each coefficient as saved, its microbenchmark value, how far it moved
    assert "coefficient" in out and "microbench" in out and "at the bound" in out


def test_the_quality_table_says_how_far_the_refit_moved_each_coefficient():
    fits = {"spmm": {"coefficients": {"gamma": 1e-9, "kappa": 2e-5}, "r2": 0.8},
            "plans": {"pinned": ["kappa"]}}
    rows = quality({"gamma": 3e-9, "kappa": 2e-4}, fits)
    assert rows[1].split()[:4] == ["gamma", "3e-09", "1e-09", "x3"] and "spmm R^2(log) 0.80" in rows[1]
    assert rows[2].split()[:4] == ["kappa", "0.0002", "2e-05", "x10"] and rows[2].endswith("at the bound")


def test_the_table_shows_each_plans_factor():
    rows = quality({"gamma": 2e-10, "plan_factors": (("p2p1d", 0.69), ("allgather1d", 1.41))},
                   {"spmm": {"coefficients": {"gamma": 1e-10}, "r2": 0.9}})
    assert rows[-1] == "plan factors: allgather1d x1.4, p2p1d x0.69"
    assert not any("plan factors" in r for r in quality({"gamma": 1e-10}, {}))
