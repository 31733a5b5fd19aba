"""dspla against its peers, each from a build the user points at, skipped with the reason when
it is absent (docs/benchmarks.md says how to build them):

- PETSc (bench/_peers_petsc.py): one distributed product, ``C = A @ X``, A sparse
  (soc-Slashdot0902), X dense with K columns, at P = 1 and 2, each rank owning the same rows on
  both sides. Runs when the system Python has petsc4py (Debian: ``apt install python3-petsc4py``).
- LAGraph (bench/_peers_lagraph.py, ``--lagraph DIR``): BFS, PageRank, connected components,
  triangle counting and SSSP, one process and one thread each, LAGraph's own demo programs
  against dspla's examples/ functions in this process; with ``--lagraph-results EXE``, BFS also
  timed to the microsecond by that program, for levels (``bfs-level``, dspla's result) and for
  parents (``bfs-parent``, the demo's call).
- CombBLAS (bench/_peers_combblas.py, ``--combblas DIR``): BFS, connected components (FastSV) and
  SpGEMM (``A @ A``) under the venv's mpiexec at P processes (CombBLAS: square P only).

LAGraph and CombBLAS run on soc-Slashdot0902 symmetrised and email-Enron (``--graphs``), BFS and
SSSP from the node of highest degree. Their times are the kernels' (the peers print their file
reading apart); each figure is a median over ``--repeats`` interleaved rounds of (the peer's job,
dspla's runs), and the ratio is dspla / peer (below 1: dspla faster). Results are cross-checked
(reached nodes, levels, components, triangles, SSSP distances, PageRank's largest ranks, C's
entries); the bench exits 1 if any differ.

    dspla bench peers [--lagraph DIR [--lagraph-results EXE]] [--combblas DIR] [--peers lagraph,combblas]
                      [--graphs slashdot,enron] [--repeats 3] [--runs 8] [--combblas-P 1,2,4] [--json F]
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile

from . import _peers_combblas, _peers_lagraph, _peers_petsc
from . import _peers_common as pc
from ._peers_petsc import INSTALL, PETSC_MPIEXEC, PETSC_PYTHON, SLASHDOT, find_petsc  # noqa: F401 (used by tests)
from .common import git_commit

PEERS = ("petsc", "lagraph", "combblas")


def _ints(text: str) -> list:
    return [int(x) for x in text.split(",") if x.strip()]


def _names(text: str, valid, what: str, ap) -> list:
    got = [x.strip() for x in text.split(",") if x.strip()]
    bad = [x for x in got if x not in valid]
    if bad:
        ap.error(f"unknown {what} {bad[0]!r}; valid: {', '.join(valid)}")
    return got


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="dspla bench peers", description=__doc__.split("\n\n")[0])
    ap.add_argument("--peers", default=",".join(PEERS), help="which peers to run, comma-separated")
    ap.add_argument("--json", help="write the figures here")
    g = ap.add_argument_group("LAGraph and CombBLAS")
    g.add_argument("--lagraph", metavar="DIR", help="LAGraph's build directory (with src/benchmark/*_demo)")
    g.add_argument("--lagraph-results", metavar="EXE", help="a program printing LAGraph's results (docs/benchmarks.md)")
    g.add_argument("--combblas", metavar="DIR", help="CombBLAS's build directory (SpMSpVBench, fastsv, MultTiming)")
    g.add_argument("--graphs", default="slashdot,enron", help="graphs, comma-separated (slashdot, enron)")
    g.add_argument("--algorithms", default=",".join(pc.ALGORITHMS), help="LAGraph's algorithms to compare")
    g.add_argument("--repeats", type=int, default=3, help="interleaved rounds of (peer job, dspla runs)")
    g.add_argument("--runs", type=int, default=8, help="timed runs per job (BFS, SSSP and dspla's side)")
    g.add_argument("--combblas-P", default="1,2,4", help="process counts against CombBLAS")
    g.add_argument("--spgemm-graphs", default="enron", help="graphs for SpGEMM against CombBLAS ('' for none)")
    g = ap.add_argument_group("PETSc")
    g.add_argument("--K", default="16,64", help="columns of X, comma-separated")
    g.add_argument("--P", default="1,2", help="process counts, comma-separated")
    g.add_argument("--rounds", type=int, default=10, help="timed products per K and configuration")
    g.add_argument("--trials", type=int, default=2, help="alternating sets of jobs the rounds are split over")
    g.add_argument("--graph", default=SLASHDOT, help="graph or sparse matrix file (dspla.formats.graph.load_graph)")
    g.add_argument("--petsc-python", default=PETSC_PYTHON, help="a Python with petsc4py")
    g.add_argument("--petsc-mpiexec", default=PETSC_MPIEXEC, help="the mpiexec of PETSc's MPI")
    ap.add_argument("--worker", nargs=2, metavar=("DATA", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    try:
        args.Ks, args.Ps, args.combblas_Ps = _ints(args.K), _ints(args.P), _ints(args.combblas_P)
    except ValueError:
        ap.error(f"--K, --P and --combblas-P take comma-separated integers, not {args.K!r} / {args.P!r} / "
                 f"{args.combblas_P!r}")
    if not (args.Ks and args.Ps and args.combblas_Ps) or min(args.Ks + args.Ps + args.combblas_Ps) < 1 or \
            min(args.rounds, args.trials, args.repeats, args.runs) < 1:
        ap.error("--K, --P, --combblas-P, --rounds, --trials, --repeats and --runs must be positive")
    args.trials = min(args.trials, args.rounds)
    args.peer_list = _names(args.peers, PEERS, "peer", ap)
    args.graph_list = _names(args.graphs, pc.GRAPHS, "graph", ap)
    args.algorithm_list = _names(args.algorithms, pc.ALGORITHMS, "algorithm", ap)
    args.spgemm_list = _names(args.spgemm_graphs, pc.GRAPHS, "graph", ap)
    return args


def find(args) -> dict:
    """Per peer among LAGraph and CombBLAS: (its programs or None, why some or all are missing)."""
    out = {}
    if "lagraph" in args.peer_list:
        progs, why = _peers_lagraph.find(args.lagraph)
        if progs and args.lagraph_results and not os.access(args.lagraph_results, os.X_OK):
            why = "; ".join(w for w in (why, f"--lagraph-results {args.lagraph_results} is not an executable") if w)
        out["lagraph"] = (progs, why)
    if "combblas" in args.peer_list:
        out["combblas"] = _peers_combblas.find(args.combblas)
    return out


def run_graph_peers(args, found: dict, report: dict) -> bool:
    """LAGraph and CombBLAS on the graphs (written once for both); True if the results agree."""
    ok = True
    with tempfile.TemporaryDirectory(prefix="dspla-peers-") as tmp:
        spgemm = args.spgemm_list if (found.get("combblas") or (None,))[0] else []
        graphs = pc.prepare(sorted(set(args.graph_list) | set(spgemm)), tmp)
        report["graphs"] = {g.name: {"nodes": g.n, "entries": g.nnz, "source": g.source, "undirected": g.undirected}
                            for g in graphs.values()}
        for g in graphs.values():
            print(f"{g.name}: {g.n} nodes, {g.nnz} entries, source {g.source}")
        main_graphs = {k: graphs[k] for k in args.graph_list}
        for peer, (progs, why) in found.items():
            if progs is None:
                continue
            print(f"{'LAGraph' if peer == 'lagraph' else 'CombBLAS'}: {args.repeats} interleaved repeats, "
                  f"{args.runs} runs per job; load {pc.load_avg()}" + (f" ({why})" if why else ""))
            if peer == "lagraph":
                exe = args.lagraph_results if args.lagraph_results and os.access(args.lagraph_results, os.X_OK) \
                    else None
                sec = _peers_lagraph.compare(progs, exe, main_graphs, args.algorithm_list, args.repeats, args.runs,
                                             tmp, print)
                lines = _peers_lagraph.table(sec)
            else:
                sec = _peers_combblas.compare(progs, main_graphs, args.combblas_Ps, args.spgemm_list, args.repeats,
                                              args.runs, print)
                lines = _peers_combblas.table(sec)
            sec.update(programs=progs, missing=why, load_end=pc.load_avg())
            report[peer] = sec
            print("\n".join(lines))
            ok = ok and all(r.get("check", {}).get("ok") is not False for r in sec["rows"])
    return ok


def main(argv=None) -> int:
    args = parse(argv)
    if args.worker:   # dspla's side of the PETSc comparison, under mpiexec
        res = _peers_petsc.dspla_rounds(args.worker[0], args.rounds)
        if res is not None:
            with open(args.worker[1], "w") as fh:
                json.dump(res, fh)
        return 0
    report: dict = {"commit": git_commit(), "load_start": pc.load_avg(), "repeats": args.repeats, "runs": args.runs}
    print(f"commit {report['commit']}; load {report['load_start']}")
    ok = True
    if "petsc" in args.peer_list:
        report["petsc"], ok = _peers_petsc.run(args)
    found = find(args)
    for peer, (progs, why) in found.items():
        if progs is None:
            print(f"{'LAGraph' if peer == 'lagraph' else 'CombBLAS'} skipped: {why}.")
            report[peer] = {"skipped": why}
    if any(progs for progs, _ in found.values()):
        ok = run_graph_peers(args, found, report) and ok
    report["load_end"] = pc.load_avg()
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)
    if not ok:
        print("RESULTS DIFFER: see the checks above")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
