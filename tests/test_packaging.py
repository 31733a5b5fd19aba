"""The package metadata: the license as an SPDX expression (a table made setuptools print a
deprecation banner three times per install), with the setuptools that reads it."""
from __future__ import annotations

from importlib.metadata import metadata

import pytest

from conftest import ROOT

tomllib = pytest.importorskip("tomllib")   # (Python 3.11+)


def test_the_license_is_an_spdx_expression():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "BSD-3-Clause"
    assert "setuptools>=77" in meta["build-system"]["requires"]   # (PEP 639: the first to read the string)


def test_the_installed_metadata_says_it():
    got = metadata("dspla")
    assert got.get("License-Expression") == "BSD-3-Clause" or got.get("License") == "BSD-3-Clause"
