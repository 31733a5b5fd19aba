"""Where calibrations are kept and which one a run reads: ``dspla calibrate --show`` says both
(it used to be a silent choice), and the microbenchmarks free what they time (a rank reached
5.1 GB in the SpMM family: python-graphblas matrices sit in reference cycles)."""
from __future__ import annotations

import json
import weakref

import graphblas as gb
import numpy as np

from dspla.calibration.microbench import _time
from dspla.cli.main import main
from dspla.costmodel import coefficients as co


def _cal(path, within=0.9):
    path.write_text(json.dumps({"coefficients": {"gamma": 1e-9}, "fits": {"plans": {"after": {"within_0.67_1.5":
                                                                                          within}}},
                                "made": "2030-01-02 03:04"}))


def test_show_names_the_file_in_use_and_how_to_remove_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DSPLA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("DSPLA_CALIBRATION", raising=False)
    co._loaded.clear()
    assert main(["calibrate", "--show"]) == 0
    out = capsys.readouterr().out
    assert "in use for P = 2: the shipped default" in out and f"would write {tmp_path / 'calibration-P2.json'}" in out
    _cal(tmp_path / "calibration-P4.json")
    assert main(["calibrate", "--show", "--np", "2"]) == 0
    out = capsys.readouterr().out
    assert f"in use for P = 2: {tmp_path / 'calibration-P4.json'} (this user's calibration for P = 4, the nearest " \
           "to P = 2 calibrated; made 2030-01-02 03:04, 90% of its plan runs predicted within [0.67, 1.5])" in out
    assert f"rm {tmp_path / 'calibration-P4.json'}" in out
    assert co.load(2).source == str(tmp_path / "calibration-P4.json")   # (what --show says is what load reads)
    monkeypatch.setenv("DSPLA_CALIBRATION", str(tmp_path / "calibration-P4.json"))
    assert main(["calibrate", "--show"]) == 0
    assert "$DSPLA_CALIBRATION names it" in capsys.readouterr().out
    co._loaded.clear()


def test_timed_products_are_freed_between_calls():
    made = []

    def product():
        M = gb.Matrix.from_dense(np.ones((200, 50)))
        made.append(weakref.ref(M))
        return M

    _time(product, repeat=4, collect=True)
    assert len(made) == 5 and all(r() is None for r in made)
