"""Progress lines go through the logging module, and dspla.quiet() (or progress=False) silences
them; with logging left unconfigured they still reach stderr, as a command-line tool's should."""
import logging
import subprocess
import sys

import scipy.sparse as sp

import dspla as dp
from dspla.partition import partition

A = sp.random_array((200, 200), density=0.05, random_state=1, format="csr")


def test_progress_is_logged_on_dspla_partition(caplog):
    with caplog.at_level(logging.INFO, logger="dspla"):
        partition(A, 2, "graph", cache=False, progress=True)
    lines = [r.getMessage() for r in caplog.records if r.name == "dspla.partition"]
    assert lines and all(ln.startswith("[dspla partition") for ln in lines)


def test_quiet_silences_every_call_that_does_not_ask(caplog):
    dp.quiet()
    try:
        with caplog.at_level(logging.INFO, logger="dspla"):
            partition(A, 2, "graph", cache=False)
            partition(A, 2, "graph", cache=False, progress=None)
        assert not [r for r in caplog.records if r.name.startswith("dspla")]
    finally:
        dp.quiet(False)


def test_the_logging_level_silences_too(caplog):
    with caplog.at_level(logging.WARNING, logger="dspla"):
        partition(A, 2, "graph", cache=False, progress=True)
    assert not [r for r in caplog.records if r.name.startswith("dspla")]


def test_unconfigured_logging_still_prints_to_stderr():
    code = ("import scipy.sparse as sp; from dspla.partition import partition; "
            "partition(sp.random_array((200, 200), density=0.05, random_state=1, format='csr'), 2, 'graph', "
            "cache=False, progress=True)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "[dspla partition" in r.stderr, r.stderr
