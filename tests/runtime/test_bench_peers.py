"""`dspla bench peers`: its arguments; its skips (each peer skipped with its reason when its build
is absent: CI has none of them); the parsing of what LAGraph's and CombBLAS's programs print
(samples of their real output); the cross-checks; and whole LAGraph and CombBLAS comparisons
against stand-in programs that print in the peers' formats the results scipy computes (an
independent oracle), so a dspla result that differs makes the bench fail. Where the system Python
has petsc4py, a short PETSc run on a small random matrix must agree."""
from __future__ import annotations

import json
import os
import stat
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # bench/ of this checkout
from bench import _peers_combblas as cb  # noqa: E402
from bench import _peers_common as pc  # noqa: E402
from bench import _peers_lagraph as lg  # noqa: E402
from bench import peers  # noqa: E402


def test_arguments():
    a = peers.parse([])
    assert (a.Ks, a.Ps, a.rounds, a.trials, a.json, a.worker) == ([16, 64], [1, 2], 10, 2, None, None)
    assert a.graph.endswith("soc-Slashdot0902.txt.gz")
    assert (a.peer_list, a.graph_list, a.algorithm_list, a.spgemm_list) == \
        (["petsc", "lagraph", "combblas"], ["slashdot", "enron"],
         ["bfs", "bfs-level", "bfs-parent", "pagerank", "pagerank64", "cc", "tc", "sssp"], ["enron"])
    assert (a.repeats, a.runs, a.combblas_Ps, a.lagraph, a.combblas) == (3, 8, [1, 2, 4], None, None)
    a = peers.parse(["--K", "4,8", "--P", "2", "--rounds", "1", "--trials", "3", "--spgemm-graphs", "",
                     "--peers", "lagraph", "--algorithms", "bfs,tc", "--combblas-P", "1,4"])
    assert (a.Ks, a.Ps, a.rounds, a.trials) == ([4, 8], [2], 1, 1)     # no more trials than rounds
    assert (a.spgemm_list, a.peer_list, a.algorithm_list, a.combblas_Ps) == ([], ["lagraph"], ["bfs", "tc"], [1, 4])
    for bad in (["--K", "16,x"], ["--K", "0"], ["--rounds", "0"], ["--runs", "0"], ["--combblas-P", "0"],
                ["--peers", "petsc,galois"], ["--graphs", "slashdot,orkut"], ["--algorithms", "bfs,bc"]):
        with pytest.raises(SystemExit) as e:
            peers.parse(bad)
        assert e.value.code == 2


# ----------------------------------------------------------------------------- skips
@pytest.mark.parametrize("which", ["python", "mpiexec"])
def test_petsc_skips_with_a_clear_message_when_missing(tmp_path, capsys, which):
    missing = str(tmp_path / "not-there")
    out = tmp_path / "r.json"
    argv = ["--peers", "petsc", "--petsc-python" if which == "python" else "--petsc-mpiexec", missing,
            "--json", str(out)]
    assert peers.main(argv) == 0
    text = capsys.readouterr().out
    assert "PETSc skipped:" in text and missing in text
    assert "optional" in text and "apt install python3-petsc4py" in text
    assert json.loads(out.read_text())["petsc"]["skipped"].endswith("not found")


def test_petsc_skips_when_the_python_has_no_petsc4py(capsys):
    # this test's own Python (the project's venv) has no petsc4py
    assert peers.main(["--peers", "petsc", "--petsc-python", sys.executable, "--petsc-mpiexec", sys.executable]) == 0
    assert "cannot import petsc4py" in capsys.readouterr().out


def test_lagraph_and_combblas_skip_with_their_reasons(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert peers.main(["--peers", "lagraph,combblas", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "LAGraph skipped: no --lagraph DIR given" in text and "CombBLAS skipped: no --combblas DIR given" in text
    assert "docs/benchmarks.md" in text
    got = json.loads(out.read_text())
    assert "--lagraph" in got["lagraph"]["skipped"] and "--combblas" in got["combblas"]["skipped"]
    assert peers.main(["--peers", "lagraph", "--lagraph", str(tmp_path / "nowhere")]) == 0
    assert "is not a directory" in capsys.readouterr().out
    assert peers.main(["--peers", "combblas", "--combblas", str(tmp_path)]) == 0
    assert f"no CombBLAS programs (SpMSpVBench, fastsv, MultTiming) under {tmp_path}" in capsys.readouterr().out


def _program(path: Path, body: str = "") -> Path:
    """An executable Python script (the stand-ins below), or an empty one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(body))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_finding_the_programs(tmp_path):
    top = tmp_path / "build"
    _program(top / "src" / "benchmark" / "bfs_demo")
    _program(top / "src" / "benchmark" / "tc_demo")
    (top / "src" / "benchmark" / "cc_demo").write_text("not executable")
    progs, why = lg.find(str(top))
    assert set(progs) == {"bfs", "tc"} and progs["bfs"].endswith("src/benchmark/bfs_demo")
    assert "gappagerank_demo" in why and "cc_demo" in why and "sssp_demo" in why
    assert why.count("gappagerank_demo") == 1   # (both PageRank rows read that one demo)
    _program(top / "Applications" / "SpMSpV-IPDPS2017" / "SpMSpVBench")
    progs, why = cb.find(str(top))
    assert set(progs) == {"bfs"} and "fastsv not found" in why and "FastSV.cpp" in why and "MultTiming" in why
    assert lg.find(None)[0] is None and "no --lagraph DIR given" in lg.find(None)[1]
    assert [P for P in range(1, 17) if cb.square(P)] == [1, 4, 9, 16]


# ----------------------------------------------------------------------------- parsing
BFS_OUT = """\
include: SuiteSparse:GraphBLAS v9.4.0 [Oct 15, 2024]
library: SuiteSparse:GraphBLAS v9.4.5 [Feb 20, 2025]
nthreads_max: 1
read time: 0.828068
warmup: parent only, pushpull: 0.00692673 sec

------------------------------- threads:  1
parent only  pushpull trial:  0 threads:  1 src:         2494     0.0025 sec
parent only  pushpull trial:  1 threads:  1 src:         2494     0.0068 sec
Avg: BFS pushpull parent only  threads   1:      0.004 sec: /tmp/pg/slashdot.mtx
"""
PR_OUT = """\
Avg: GAP: Avg: PR   1:      0.037 sec: /tmp/pg/enron.mtx rsum: 1.000002e+00
read time: 0.260083
--------------------------- nthreads:  1
trial:  0 time:     0.0149 sec
trial:  1 time:     0.0145 sec
GAP:   1: avg time:      0.037 (sec), rate:     34.458 iters: 35 rsum: 1.000002e+00

--------------------------- nthreads:  1
trial:  0 time:     0.0350 sec
trial:  1 time:     0.0700 sec
STD:   1: avg time:      0.034 (sec), rate:     37.709 iters: 35 rsum: 1.000002e+00
"""
CC_OUT = """\
SV6:      nthreads:  1 Avg: time:     0.0191 sec ntrials 16
read time: 0.138883
nCC:                1e+03
SV6:      nthreads:  1 trial:  0 time:     0.0173 sec
SV6:      nthreads:  1 trial:  1 time:     0.0343 sec
SV6:      nthreads:  1 Avg: time:     0.0191 sec ntrials 16
"""
TC_OUT = """\
Method used: Sandia_LUT: sum ((L*U') .* L)   sort: none
read time: 0.250433
warmup method: Sandia_ULT: sum ((U*L') .* U)   auto-sort
# of triangles: 727044
nthreads:   1 time:     0.039399 rate:   9.33 (Sandia_ULT, one trial)

Method: Sandia_LL: sum ((L*L) .* L)     auto-sort
all but urand is slow with method 3: skipped

Method: Sandia_LUT: sum ((L*U') .* L)   auto-sort
trial  0:     0.035899 sec rate  10.24  # triangles: 727044
trial  1:     0.057435 sec rate   6.40  # triangles: 727044
nthreads:   1 time:     0.063010 rate:   5.83   # of triangles: 727044 presort: 2
"""
SSSP_OUT = """\
read time: 0.159539
delta: 2
sssp15:  threads:  1 trial:  0 source         5038 time:     0.0199 sec
sssp15:  threads:  1 trial:  1 source         5038 time:     0.0130 sec
sssp15:  threads:  1 trial:  2 source         5038 time:     0.0140 sec

 1: SSSP    time:       0.016581 sec  rate:    22.17 (delta 2)
"""


def test_parsing_lagraphs_demos():
    b = lg.parse_bfs(BFS_OUT)
    assert b == {"read_s": 0.828068, "sources": [2494], "seconds": [0.0025, 0.0068]}   # the warm-up left out
    assert lg.versions(BFS_OUT) == {"include": "SuiteSparse:GraphBLAS v9.4.0 [Oct 15, 2024]",
                                    "library": "SuiteSparse:GraphBLAS v9.4.5 [Feb 20, 2025]"}
    p = lg.parse_pagerank(PR_OUT)
    assert p["std"] == {"seconds": [0.035, 0.07], "iterations": 35, "sum": 1.000002}
    assert p["gap"]["seconds"] == [0.0149, 0.0145] and p["read_s"] == 0.260083
    assert lg.peer_seconds("pagerank", p) == [0.001, 0.002]         # the standard PageRank, per iteration
    c = lg.parse_cc(CC_OUT)
    assert (c["seconds"], c["components_g"]) == ([0.0173, 0.0343], "1e+03")     # not the average lines
    t = lg.parse_tc(TC_OUT)
    assert t["seconds"] == [0.035899, 0.057435] and t["triangles"] == 727044
    assert t["method"] == "Sandia_LUT: sum ((L*U') .* L) auto-sort"
    s = lg.parse_sssp(SSSP_OUT)
    assert s == {"read_s": 0.159539, "sources": [5038], "seconds": [0.013, 0.014]}   # the cold first call dropped
    for parse in lg.PARSERS.values():
        with pytest.raises(ValueError, match="in the demo's output"):
            parse("Segmentation fault\n")


def test_parsing_the_results_program():
    got = lg.parse_results("read time: 0.3\nbfs source 5 reached 9 maxlevel 3 levelsum 14\n"
                           "pagerank iterations 35 top 5:0.25 1:0.125\ncc components 2\ntc triangles 7\n"
                           "sssp source 5 reached 9 sum 40 max 9\n")
    assert got == {"bfs": {"reached": 9, "maxlevel": 3, "levelsum": 14}, "cc": {"components": 2},
                   "pagerank": {"iterations": 35, "top": [[5, 0.25], [1, 0.125]]}, "tc": {"triangles": 7},
                   "sssp": {"reached": 9, "sum": 40, "max": 9}}
    timed = "read time: 0.07\nbfs-level seconds 0.000734715 0.00072 7.3e-04\n"
    assert lg.parse_timed(timed, "bfs-level")["seconds"] == [0.000734715, 0.00072, 0.00073]
    with pytest.raises(ValueError, match="'bfs-parent seconds ...' line"):
        lg.parse_timed(timed, "bfs-parent")


SPMSPV_OUT = """\
Source vertex: 5038
-------------------------------------------------
BFS With CSC matrix and SpMSpV-bucket algorithm 
-------------------------------------------------
iteration: 0 xnnz: 1 ynnz: 1383 SpMSpV time: 0.000129393

Overall stats:
  starting vertex: 5038
  Avg number iterations: 9
  Avg number of vertices found: 33696
  Avg Total time: 0.0190653
-------------------------------------------------
BFS With DCSC matric and SpMSpV-SPA algorithm 
-------------------------------------------------

Overall stats:
  starting vertex: 5038
  Avg number iterations: 9
  Avg number of vertices found: 33696
  Avg Total time: 7.80073e-03
"""  # noqa: W291 (CombBLAS's headings end in a space)
FASTSV_OUT = """\
File Read time: 0.209021
Iteration 1: diff 35600
Number of components: 1065
Total time: 0.0109042
=================================================
"""
MULT_OUT = """\
C has a total of 30492154 nonzeros
Warmed up for DoubleBuff
Double buffered multiplications finished
8.780719 seconds elapsed per iteration
Synchronous multiplications finished
5.411731 seconds elapsed per iteration
"""


def test_parsing_combblass_programs():
    s = cb.parse_spmspv(SPMSPV_OUT)
    assert s == {"source": 5038, "kernels": {
        "CSC matrix and SpMSpV-bucket": {"seconds": 0.0190653, "reached": 33696, "levels": 9},
        "DCSC matrix and SpMSpV-SPA": {"seconds": 0.00780073, "reached": 33696, "levels": 9}}}
    assert cb.parse_fastsv(FASTSV_OUT) == {"components": 1065, "seconds": 0.0109042, "read_s": 0.209021}
    assert cb.parse_multtiming(MULT_OUT) == {"nnz": 30492154,
                                             "kernels": {"Double buffered": 8.780719, "Synchronous": 5.411731}}
    for parse in (cb.parse_spmspv, cb.parse_fastsv, cb.parse_multtiming):
        with pytest.raises(ValueError):
            parse("This version of the Combinatorial BLAS only works on a square logical processor grid\n")


def test_checks():
    assert pc.check("bfs", {"reached": 9, "maxlevel": 3}, {"reached": 9, "maxlevel": 3, "levelsum": 1}) == \
        (True, "reached 9 = 9, maxlevel 3 = 3")
    assert pc.check("bfs", {"reached": 9}, {"reached": 8}) == (False, "reached 9 vs 8")
    assert pc.check("sssp", {"reached": 9}, {})[0] is None
    top = [[3, 0.4], [1, 0.3], [0, 0.2], [2, 0.05], [4, 0.05]]
    assert pc.check("pagerank", {"top": top}, {"top": [[i, r * (1 + 1e-5)] for i, r in top]})[0] is True
    assert pc.check("pagerank", {"top": top}, {"top": [top[1], top[0]] + top[2:]})[0] is False   # order
    assert pc.check("pagerank", {"top": top}, {"top": [[i, r * 1.05] for i, r in top]})[0] is False  # values
    assert pc.check("pagerank", {"sum": 1.0}, {"sum": 1.000002})[0] is True    # a demo's sum only
    assert pc.check("pagerank", {"sum": 1 + 1e-6, "dtype": "float32"}, {"sum": 1.0})[0] is True
    assert pc.check("pagerank64", {"sum": 1 + 1e-6, "dtype": "float64"}, {"sum": 1.0})[0] is False


def test_pagerank_as_lagraph_computes_it():
    """The float32 function stops where LAGr_PageRank does and agrees with the float64 one."""
    import networkx as nx
    fns = pc.functions()
    G = nx.gnp_random_graph(300, 0.03, seed=4, directed=True)
    G.remove_edges_from([(u, v) for u, v in list(G.edges) if u % 29 == 0])   # dangling nodes
    A = sp.csr_array(nx.to_scipy_sparse_array(G, nodelist=range(300), dtype=float))
    got = {alg: pc.summary(alg, fns[alg]()(**pc.inputs(alg, A, 0))) for alg in pc.PAGERANK}
    assert got["pagerank"]["dtype"] == "float32" and got["pagerank64"]["dtype"] == "float64"
    assert got["pagerank"]["iterations"] < got["pagerank64"]["iterations"] <= 200
    want = nx.pagerank(G, alpha=0.85, tol=1e-12, max_iter=1000)
    for alg, rtol in (("pagerank", 1e-3), ("pagerank64", 1e-8)):
        assert [i for i, _ in got[alg]["top"]] == sorted(want, key=lambda i: -want[i])[:pc.TOP]
        np.testing.assert_allclose([r for _, r in got[alg]["top"]], [want[i] for i, _ in got[alg]["top"]], rtol=rtol)
    row = lg._row(pc.Graph("g", "", "", 10, 20, 5), "cc", ([[0.002]], [[0.001]]), {"components": 1065},
                  {"seconds": [0.001], "components_g": "1e+03"}, None)
    assert (row["ratio"], row["check"]["ok"], row["check"]["from"]) == (2.0, True, "cc_demo")
    row = lg._row(pc.Graph("g", "", "", 10, 20, 5), "bfs", ([[0.002]], [[0.001]]), {"reached": 3},
                  {"seconds": [0.001], "sources": [5]}, None)
    assert row["check"]["ok"] is None and "bfs_demo prints no result" in row["check"]["text"]
    row = lg._row(pc.Graph("g", "", "", 10, 20, 4), "bfs", ([[0.002]], [[0.001]]), {"reached": 3},
                  {"seconds": [0.001], "sources": [5]}, {"reached": 3})
    assert row["check"]["ok"] is False and "not 4" in row["check"]["text"]     # another source


# ----------------------------------------------------------------------------- stand-in peers
# Each stand-in reads the graph as the peer would and prints, in the peer's format, what scipy
# computes: an oracle independent of dspla.
ORACLE = """
import numpy as np, scipy.io, scipy.sparse as sp
from scipy.sparse import csgraph
A = sp.csr_array(scipy.io.mmread(MATRIX))
n = A.shape[0]
P = sp.csr_array((np.ones(A.nnz), A.indices, A.indptr), shape=A.shape)
def bfs(s):
    d = csgraph.shortest_path(P, unweighted=True, indices=s)
    return d[np.isfinite(d)].astype(int)
def sssp(s):
    d = csgraph.dijkstra(A, indices=s)
    return d[np.isfinite(d)].astype(int)
def triangles():
    L = sp.tril(P, -1).tocsr()
    return int((L @ L).multiply(L).sum())
def pagerank():
    deg = np.asarray(P.sum(axis=1)).ravel()
    r = np.full(n, 1 / n)
    for it in range(1, 1000):
        w = np.divide(r, deg, out=np.zeros(n), where=deg > 0)
        new = 0.85 * (P.T @ w) + (0.85 * r[deg == 0].sum() + 0.15) / n
        done = np.abs(new - r).sum() < 1e-12
        r = new
        if done:
            return r, it
"""
DEMOS = {
    "bfs_demo": "import sys\nMATRIX = sys.argv[1]" + ORACLE + """
src = int(open(sys.argv[2]).read().split()[-1]) - 1
print("read time: 0.01")
for k in range(3):
    print(f"parent only  pushpull trial:  {k} threads:  1 src: {src:12d}     0.0010 sec")
""",
    "gappagerank_demo": "import sys\nMATRIX = sys.argv[1]" + ORACLE + """
r, its = pagerank()
for what in ("GAP", "STD"):
    print("trial:  0 time:     0.0100 sec")
    print(f"{what}:   1: avg time:      0.010 (sec), rate:  1.0 iters: {its} rsum: {r.sum():e}")
""",
    "cc_demo": "import sys\nMATRIX = sys.argv[1]" + ORACLE + """
k = csgraph.connected_components(P, directed=False)[0]
print(f"nCC: {k:20.0g}")
print("SV6:      nthreads:  1 trial:  0 time:     0.0020 sec")
""",
    "tc_demo": "import sys\nMATRIX = sys.argv[1]" + ORACLE + """
print(f"# of triangles: {triangles()}")
print("Method: Sandia_LUT: sum ((L*U') .* L)   auto-sort")
print(f"trial  0:     0.004000 sec rate  1.00  # triangles: {triangles()}")
""",
    "sssp_demo": "import sys\nMATRIX = sys.argv[1]" + ORACLE + """
src = int(open(sys.argv[2]).read().split()[-1]) - 1
for k in range(3):
    print(f"sssp15:  threads:  1 trial:  {k} source {src:12d} time:     0.0030 sec")
""",
    "lagraph_results": "import sys\nMATRIX = sys.argv[1]" + ORACLE + """
s = int(sys.argv[2])
if len(sys.argv) == 5:   # MODE RUNS: the BFS calls timed
    print(f"read time: 0.01\\n{sys.argv[3]} seconds" + " 0.000500123" * int(sys.argv[4]))
    sys.exit(0)
lv, d, (r, its) = bfs(s), sssp(s), pagerank()
top = np.argsort(-r, kind="stable")[:10]
print(f"bfs source {s} reached {lv.size} maxlevel {lv.max()} levelsum {lv.sum() + WRONG}")
print("pagerank iterations 35 top " + " ".join(f"{i}:{r[i]:.9g}" for i in top))
print(f"cc components {csgraph.connected_components(P, directed=False)[0]}")
print(f"tc triangles {triangles()}")
print(f"sssp source {s} reached {d.size} sum {d.sum()} max {d.max()}")
""",
    "SpMSpVBench": "import sys\nMATRIX = sys.argv[2]" + ORACLE + """
s = int(sys.argv[4])
for name in ("CSC matrix and SpMSpV-bucket", "DCSC matric and SpMSpV-SPA"):
    print(f"BFS With {name} algorithm \\n  starting vertex: {s}\\n  Avg number of vertices found: {bfs(s).size}")
    print("  Avg Total time: 0.002")
""",
    "fastsv": "import sys\nMATRIX = sys.argv[2]" + ORACLE + """
print(f"Number of components: {csgraph.connected_components(P, directed=False)[0]}\\nTotal time: 0.003")
""",
    "MultTiming": "import sys\nMATRIX = sys.argv[1]" + ORACLE + """
print(f"C has a total of {(A @ A).nnz} nonzeros")
print("Synchronous multiplications finished\\n0.010000 seconds elapsed per iteration")
""",
}


@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """A small graph standing for the real ones: two components, triangles, a dangling-free core."""
    rng = np.random.default_rng(5)
    n = 60
    r, c = rng.integers(0, 40, 200), rng.integers(0, 40, 200)
    r, c = np.r_[r, 45, 46, 47], np.r_[c, 46, 47, 45]        # a separate triangle; nodes 40.. 44, 48.. isolated
    path = tmp_path / "tiny.mtx"
    A = sp.coo_array((np.ones(r.size), (r, c)), shape=(n, n))
    import scipy.io
    scipy.io.mmwrite(str(path), A)
    monkeypatch.setitem(pc.GRAPHS, "tiny", (str(path), True))
    return tmp_path


def _stand_ins(top: Path, wrong: int = 0) -> Path:
    for name, body in DEMOS.items():
        _program(top / name, body.replace("WRONG", str(wrong)))
    return top


def test_the_lagraph_comparison_against_stand_ins(tiny, capsys):
    top = _stand_ins(tiny / "lagraph")
    out = tiny / "r.json"
    argv = ["--peers", "lagraph", "--lagraph", str(top), "--graphs", "tiny", "--repeats", "2", "--runs", "2",
            "--json", str(out)]
    assert peers.main(argv + ["--lagraph-results", str(top / "lagraph_results")]) == 0, capsys.readouterr().out
    got = json.loads(out.read_text())
    rows = {r["algorithm"]: r for r in got["lagraph"]["rows"]}
    assert set(rows) == {"bfs", "bfs-level", "bfs-parent", "pagerank", "pagerank64", "cc", "tc", "sssp"}
    assert all(r["check"]["ok"] and r["check"]["from"] == "results program" for r in rows.values())
    for timed in ("bfs-level", "bfs-parent"):   # the results program's timed calls, to the microsecond
        assert rows[timed]["peer_ms"] == pytest.approx(0.500123) and rows[timed]["peer_runs"] == 4   # 2 repeats x 2
    assert rows["pagerank"]["dspla_iterations"] < rows["pagerank64"]["dspla_iterations"]   # float32 to 1e-4
    assert rows["bfs"]["peer_ms"] == pytest.approx(1.0) and rows["bfs"]["peer_runs"] == 6     # 2 repeats x 3 trials
    assert rows["sssp"]["peer_ms"] == pytest.approx(3.0) and rows["sssp"]["peer_runs"] == 4   # cold trials dropped
    assert rows["pagerank"]["unit"] == "ms per iteration"
    assert rows["pagerank"]["peer_ms"] == pytest.approx(10.0 / rows["pagerank"]["peer_iterations"])
    assert all(r["dspla_runs"] == 4 and len(r["ratio_by_repeat"]) == 2 and r["ratio"] > 0 for r in rows.values())
    assert rows["bfs"]["peer_min_ms"] == pytest.approx(1.0) and rows["bfs"]["ratio_min"] > 0
    assert got["graphs"]["tiny"]["source"] == rows["bfs"]["peer_sources"][0]
    # without the results program: what the demos print (the triangles, the components' one digit)
    assert peers.main(argv) == 0
    section = json.loads(out.read_text())["lagraph"]
    rows = {r["algorithm"]: r for r in section["rows"]}
    assert rows["tc"]["check"]["ok"] and rows["cc"]["check"]["ok"] and rows["bfs"]["check"]["ok"] is None
    assert "bfs-level" not in rows and "bfs-level, bfs-parent: not run" in section["skipped"]
    assert "bfs-level, bfs-parent: not run" in capsys.readouterr().out
    # a peer that disagrees fails the bench
    _stand_ins(top, wrong=1)
    assert peers.main(argv + ["--lagraph-results", str(top / "lagraph_results"), "--algorithms", "bfs"]) == 1
    assert "DIFFERENT" in capsys.readouterr().out


@pytest.mark.mpi
def test_the_combblas_comparison_against_stand_ins(tiny, capsys):
    top = _stand_ins(tiny / "combblas")
    out = tiny / "r.json"
    argv = ["--peers", "combblas", "--combblas", str(top), "--graphs", "tiny", "--spgemm-graphs", "tiny",
            "--repeats", "1", "--runs", "2", "--combblas-P", "1,2", "--json", str(out)]
    assert peers.main(argv) == 0, capsys.readouterr().out
    rows = {(r["algorithm"], r["P"]): r for r in json.loads(out.read_text())["combblas"]["rows"]}
    assert set(rows) == {(a, P) for a in ("bfs", "cc", "spgemm") for P in (1, 2)}
    for a in ("bfs", "cc", "spgemm"):
        assert rows[(a, 1)]["check"]["ok"] and rows[(a, 1)]["dspla_ms"] > 0
        assert rows[(a, 2)]["skipped"] == cb.NOT_SQUARE and rows[(a, 2)]["dspla_ms"] > 0
    assert rows[("bfs", 1)]["peer_kernel"] in ("CSC matrix and SpMSpV-bucket", "DCSC matrix and SpMSpV-SPA")
    assert rows[("spgemm", 1)]["peer_ms"] == pytest.approx(10.0)


@pytest.fixture(scope="module")
def petsc():
    env, why = peers.find_petsc(peers.PETSC_PYTHON, peers.PETSC_MPIEXEC)
    if env is None:
        pytest.skip(f"PETSc comparison not available ({why}): it needs {peers.PETSC_PYTHON} with petsc4py "
                    f"and {peers.PETSC_MPIEXEC} ({peers.INSTALL})")
    return why


@pytest.mark.mpi
def test_a_small_run_agrees_with_petsc(tmp_path, capsys, petsc):
    rng = np.random.default_rng(3)
    n, nnz = 301, 2500     # odd: the two blocks differ by one row
    A = sp.csr_array((rng.random(nnz), (rng.integers(0, n, nnz), rng.integers(0, n, nnz))), shape=(n, n))
    sp.save_npz(tmp_path / "a.npz", sp.csr_matrix(A))
    out = tmp_path / "r.json"
    assert peers.main(["--peers", "petsc", "--graph", str(tmp_path / "a.npz"), "--K", "3,5", "--rounds", "2",
                       "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "same results" in text and f"PETSc {petsc}" in text
    got = json.loads(out.read_text())["petsc"]
    assert got["same_results"] and got["dspla_vs_petsc_max_abs"] < 1e-12 and got["petsc"] == petsc
    assert [r["K"] for r in got["table"]] == [3, 5]
    for r in got["table"]:
        for name in ("petsc1", "petsc2", "dspla1", "dspla2"):
            assert 0 < r[name]["min_ms"] <= r[name]["median_ms"]
        assert r["ratio_P2"]["min"] > 0


def test_no_module_is_run_twice_by_mistake():
    # the helpers are no benchmarks: `dspla bench list` leaves _modules out
    assert all(os.path.basename(m.__file__).startswith("_") for m in (cb, pc, lg))
