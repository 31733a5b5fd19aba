"""Shared fixtures. Real graphs come from ../shared/datasets (or $DSPLA_DATASETS): tests that
need them skip with a reason when the folder is absent, and fail when it is absent under CI."""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the tests never read this machine's cache (a user's calibration changes what auto chooses):
# each run starts from an empty one, as CI does
if "DSPLA_CACHE_DIR" not in os.environ:
    os.environ["DSPLA_CACHE_DIR"] = tempfile.mkdtemp(prefix="dspla-test-cache-")
    atexit.register(shutil.rmtree, os.environ["DSPLA_CACHE_DIR"], True)
DATASETS = Path(os.environ.get("DSPLA_DATASETS", ROOT.parent / "shared" / "datasets"))


def datasets_dir() -> Path:
    if DATASETS.is_dir():
        return DATASETS
    if os.environ.get("CI") == "true":
        pytest.fail(f"{DATASETS} is missing, and CI=true requires it (../shared beside the clone)")
    pytest.skip(f"{DATASETS} not found: tests on real graphs need ../shared/datasets beside the clone")


@pytest.fixture
def datasets() -> Path:
    return datasets_dir()


def dataset(*parts: str) -> Path:
    p = datasets_dir().joinpath(*parts)
    if not p.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{p} is missing under CI=true")
        pytest.skip(f"{p} not found")
    return p
