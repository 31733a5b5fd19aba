"""Every `dspla plot` kind renders a figure from the JSON of a small real run, and the figure
plots the JSON's numbers (read back from the matplotlib axes)."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from dspla import plot
from dspla.cli.main import main
from dspla.errors import DsplaError

ROOT = Path(__file__).resolve().parents[1]
DSPLA = str(Path(sys.executable).parent / "dspla")


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    d = tmp_path_factory.mktemp("plot")
    rng = np.random.default_rng(4)
    A = sp.random_array((120, 120), density=0.06, random_state=rng, format="coo")
    scipy.io.mmwrite(d / "a.mtx", A)
    np.save(d / "x.npy", rng.random((120, 4)))
    (d / "p.dspla").write_text("input A : sparse[n, n]\ninput X : dense[n, k]\nT = A @ X\noutput T\n")
    return d


def _rendered(path: Path, fmt: str):
    data = path.read_bytes()
    assert len(data) > 10_000, f"{path} is {len(data)} bytes"
    assert data.startswith(b"\x89PNG") if fmt == "png" else b"<svg" in data[:2000]


def _lines(ax):
    return {ln.get_label(): (list(ln.get_xdata()), list(ln.get_ydata())) for ln in ax.get_lines()}


def test_comm_stats(graph, capsys):
    js = graph / "cs.json"
    assert main(["comm-stats", str(graph / "a.mtx"), "-P", "2,4", "--methods", "random,block", "-K", "8",
                 "--json", str(js)]) == 0
    assert main(["plot", "comm-stats", str(js), "-o", str(graph / "cs.png")]) == 0
    _rendered(graph / "cs.png", "png")
    recs = json.loads(js.read_text())
    fig = plot.comm_stats(js)
    vol, msg = _lines(fig.axes[0]), _lines(fig.axes[1])
    for method in ("random", "block"):
        mine = sorted((r for r in recs if r["method"] == method), key=lambda r: r["P"])
        assert vol[f"{method} avg"] == ([r["P"] for r in mine], [r["volume_avg"] for r in mine])
        assert vol[f"{method} max"][1] == [r["volume_max"] for r in mine]
        assert msg[f"{method} max"][1] == [r["messages_max"] for r in mine]


def test_stats_of_a_two_process_run(graph):
    js = graph / "s.json"
    r = subprocess.run([DSPLA, "run", str(graph / "p.dspla"), "-i", f"A={graph / 'a.mtx'}", "-i",
                        f"X={graph / 'x.npy'}", "--np", "2", "--plan", "p2p1d", "--stats", str(js)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([DSPLA, "plot", "stats", str(js), "-o", str(graph / "s.svg")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    _rendered(graph / "s.svg", "svg")
    s = json.loads(js.read_text())
    fig = plot.stats(s)
    words, msgs, times, mem = fig.axes

    def heights(ax, i):
        return [p.get_height() for p in ax.containers[i]]
    assert heights(words, 0) == [x["words_sent"] for x in s["per_rank"]]
    assert heights(words, 1) == [x["words_received"] for x in s["per_rank"]]
    assert heights(msgs, 0) == [x["messages_sent"] for x in s["per_rank"]]
    assert heights(times, 2) == pytest.approx([x["wait_s"] for x in s["per_rank"]])
    assert heights(mem, 0) == pytest.approx([x["peak_rss_bytes"] / 2 ** 20 for x in s["per_rank"]])
    assert sum(heights(words, 0)) > 0   # two processes of a random graph do exchange rows


def test_train(graph, capsys):
    js = graph / "t.json"
    assert main(["train", str(ROOT / "examples" / "gcn.dspla"), "--dataset", "sbm", "--nodes", "2000", "--epochs", "4",
                 "--json", str(js)]) == 0
    assert main(["plot", "train", str(js)]) == 0   # default: the JSON's name with .png
    _rendered(graph / "t.png", "png")
    r = json.loads(js.read_text())
    loss, acc = (_lines(ax) for ax in plot.train(js).axes)
    assert loss["training loss"] == ([e["epoch"] for e in r["epochs"]], [e["loss"] for e in r["epochs"]])
    assert acc["validation"][1] == [e["val_acc"] for e in r["epochs"]]


def test_planner(graph):
    js = graph / "pl.json"
    r = subprocess.run([DSPLA, "bench", "planner", "--graphs", str(graph / "a.mtx"), "--P", "2", "--K", "4,8",
                        "--rounds", "1", "--repeat", "1", "--json", str(js)], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    fig = plot.plot("planner", js, graph / "pl.png")
    _rendered(graph / "pl.png", "png")
    rows = json.loads(js.read_text())["rows"]
    scatter, perk = _lines(fig.axes[0]), _lines(fig.axes[1])
    mine = [x for x in rows if x["plan"] == "p2p1d"]
    assert scatter["p2p1d"] == ([x["measured_s"] for x in mine], [x["predicted_s"] for x in mine])
    mine.sort(key=lambda x: x["K"])
    assert perk["p2p1d measured"] == ([4, 8], [x["measured_s"] for x in mine])
    assert perk["p2p1d predicted"][1] == [x["predicted_s"] for x in mine]


def test_wrong_json_and_format_are_clear_errors(graph, tmp_path, capsys):
    (tmp_path / "x.json").write_text("[1, 2]")
    assert main(["plot", "stats", str(tmp_path / "x.json")]) == 2
    assert "not the stats of dspla run --stats" in capsys.readouterr().err
    with pytest.raises(DsplaError, match="no such file"):
        plot.train(tmp_path / "none.json")
    with pytest.raises(DsplaError, match=r"\.png or \.svg"):
        plot.plot("comm-stats", [{"method": "m", "P": 2, "volume_avg": 1, "volume_max": 1, "messages_avg": 1,
                                  "messages_max": 1}], tmp_path / "f.pdf")
