"""dspla comm-stats' text table says which partitions came from the cache (their seconds are the
run that made them), and its help says what -K changes."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from dspla.cli.main import main


@pytest.fixture
def graph(tmp_path, monkeypatch):
    monkeypatch.setenv("DSPLA_CACHE_DIR", str(tmp_path / "cache"))   # an empty cache of its own
    A = sp.random_array((300, 300), density=0.03, rng=np.random.default_rng(0), format="coo")
    scipy.io.mmwrite(tmp_path / "g.mtx", A + A.T)
    return str(tmp_path / "g.mtx")


def _absolute_row(text: str, name: str) -> str:
    """The method's row under 'absolute' (the last of its rows: the ratios come first)."""
    return [line for line in text.splitlines() if line.split()[:1] == [name]][-1]


def test_cached_partitions_are_marked(graph, capsys):
    assert main(["comm-stats", graph, "-P", "2", "--methods", "graph,random", "-q"]) == 0
    first = capsys.readouterr().out
    assert "(cached)" not in first   # partitioned by this run
    assert main(["comm-stats", graph, "-P", "2", "--methods", "graph,random", "-q"]) == 0
    second = capsys.readouterr().out
    assert _absolute_row(second, "GP").endswith(" (cached)")
    assert "the partition was read from the cache" in second and "seconds are the partitioning time" in second


def test_K_help_names_the_json_words_not_table_columns(capsys):
    assert main(["comm-stats", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    # the table has no words columns: -K only changes the words fields of --json
    assert "for the words columns" not in text
    assert "sets the words fields of the --json records" in text
