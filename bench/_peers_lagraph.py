r"""dspla against LAGraph's own demo programs (LAGraph/src/benchmark/*_demo.c), one process and
one thread each, on the same graphs and source: BFS, PageRank, connected components, triangle
counting and SSSP. The demos print their read time apart from each call's time; only the calls
are compared. What each demo runs and what is taken from it:

- ``bfs_demo MATRIX SOURCES``: a warm-up, then ``LAGr_BreadthFirstSearch`` for parents only
  (push/pull), once per line of SOURCES (the same source ``--runs`` times);
- ``gappagerank_demo MATRIX``: 16 GAP-style then 16 standard PageRanks (``LAGr_PageRank``, float32,
  damping 0.85, tolerance 1e-4, sinks handled as dspla's): the standard ones, per iteration;
- ``cc_demo MATRIX``: a warm-up, then 16 ``LAGr_ConnectedComponents`` (FastSV);
- ``tc_demo MATRIX``: a warm-up (Sandia_ULT), then 3 ``LAGr_TriangleCount`` with Sandia_LUT
  (what it runs on a graph that is not its urand benchmark graph);
- ``sssp_demo MATRIX SOURCES``: ``LAGr_SingleSourceShortestPath`` (delta stepping, delta 2, int32
  lengths) once per line of SOURCES; the first call (cold: the demo has no warm-up) is dropped.

cc and tc: dspla's calls take the graph as those demos read it (its pattern: a GraphBLAS matrix,
all values 1) and each call a copy new to the function, made untimed: the demos' calls take their
graph ready made, so no conversion is timed on either side; dspla's planning and its graph-only
values are.

The demos print times in 0.1 ms steps (bfs, cc, sssp, PageRank per call) or 1 us (tc): the BFS
of email-Enron, about 0.6-0.7 ms, prints as 0.6 or 0.7 and the median lands on either step.
Results: the demos print the triangle count, the number of components (one significant digit)
and the sum of the PageRanks; the rest comes from a results program when one is given
(``--lagraph-results EXE``), a small C program of your own: ``EXE MATRIX.mtx SOURCE`` (SOURCE
0-based) reads the graph as each demo does (``readproblem`` of src/benchmark/LAGraph_demo.h),
makes the demo's call and prints one line each (unreached: no level; SSSP length INT32_MAX)::

    bfs source S reached R maxlevel L levelsum T    LAGr_BreadthFirstSearch with levels
    pagerank iterations I top i:r i:r ...            LAGr_PageRank (0.85, 1e-4, 100): 10 largest
    cc components K                                  LAGr_ConnectedComponents
    tc triangles T                                   LAGr_TriangleCount, default method
    sssp source S reached R sum D max M              LAGr_SingleSourceShortestPath, delta 2, int32

and, as ``EXE MATRIX.mtx SOURCE MODE RUNS`` (MODE ``bfs-level`` or ``bfs-parent``), reads the graph
as bfs_demo does, makes one untimed call (the demo's warm-up), then RUNS calls of
``LAGr_BreadthFirstSearch`` for the levels only (as dspla's BFS computes) or the parents only (the
demo's call), each timed by ``LAGraph_WallClockTime`` and its result freed untimed, and prints
``MODE seconds T1 ... TRUNS`` (at least microseconds). Those are the rows ``bfs-level`` and
``bfs-parent``: the same comparison as ``bfs``, to the microsecond, and, for ``bfs-level``, of the
same result; without a results program they are skipped.

Built beside the demos (L: LAGraph's source, GB: the GraphBLAS library, INC: GraphBLAS.h's
directory)::

    gcc -O2 -std=c11 -fopenmp -I$L/include -I$L/src/benchmark -I$L/src/test/include -I$INC results.c \
        -o lagraph_results -L$L/build/src -L$L/build/src/test -llagraph -llagraphtest $GB -lm \
        -Wl,-rpath,$L/build/src:$L/build/src/test:$(dirname $GB)
"""
from __future__ import annotations

import os
import re

import scipy.sparse as sp

from . import _peers_common as pc

# (both PageRank rows time the same demo's calls)
DEMOS = {"bfs": "bfs_demo", **{alg: "gappagerank_demo" for alg in pc.PAGERANK}, "cc": "cc_demo", "tc": "tc_demo",
         "sssp": "sssp_demo"}
BUILD_HINT = "build LAGraph 1.1.4 with -DBUILD_TESTING=ON as docs/benchmarks.md says"
FLOAT = r"([0-9.eE+-]+)"


def find(top: str | None) -> tuple:
    """(the demos found under ``top``, why some or all are missing: '' when none are)."""
    progs, why_not = pc.locate(top, "--lagraph", DEMOS, "LAGraph demo programs", BUILD_HINT)
    if progs is None:
        return None, why_not
    missing = list(dict.fromkeys(DEMOS[a] for a in DEMOS if a not in progs))
    return progs, (f"{', '.join(missing)} not found under {top}" if missing else "")


# ---------------------------------------------------------------------------- parsing
def versions(text: str) -> dict:
    return {k: m.group(1).strip() for k in ("include", "library")
            if (m := re.search(rf"^{k}: (.*)$", text, re.M))}


def read_time(text: str) -> float | None:
    m = re.search(rf"^read time: {FLOAT}", text, re.M)
    return float(m.group(1)) if m else None


def _need(values: list, what: str, text: str) -> list:
    if not values:
        raise ValueError(f"no {what} in the demo's output:\n{text[-1500:]}")
    return values


def parse_bfs(text: str) -> dict:
    rows = re.findall(rf"^parent only\s+pushpull trial:\s*\d+ threads:\s*\d+ src:\s*(\d+)\s+{FLOAT} sec", text, re.M)
    rows = _need(rows, "BFS trial lines ('parent only  pushpull trial: ...')", text)
    return {"read_s": read_time(text), "sources": sorted({int(s) for s, _ in rows}),
            "seconds": [float(t) for _, t in rows]}


def parse_pagerank(text: str) -> dict:
    """The GAP and standard blocks: each a run of 'trial:' lines closed by its summary line."""
    out: dict = {"read_s": read_time(text)}
    trials: list = []
    for line in text.splitlines():
        if m := re.match(rf"trial:\s*\d+ time:\s*{FLOAT} sec", line):
            trials.append(float(m.group(1)))
        elif m := re.match(rf"(GAP|STD):\s+\d+: avg time:.*iters:\s*(\d+) rsum:\s*{FLOAT}", line):
            out[m.group(1).lower()] = {"seconds": trials, "iterations": int(m.group(2)), "sum": float(m.group(3))}
            trials = []
    _need([k for k in ("std",) if k in out], "standard PageRank summary ('STD: ... iters: ...')", text)
    return out


def parse_cc(text: str) -> dict:
    rows = _need(re.findall(rf"^SV6:\s+nthreads:\s*\d+ trial:\s*\d+ time:\s*{FLOAT} sec", text, re.M),
                 "connected-components trial lines ('SV6: ... trial: ...')", text)
    m = re.search(r"^nCC:\s*(\S+)", text, re.M)
    return {"read_s": read_time(text), "seconds": [float(t) for t in rows], "components_g": m.group(1) if m else None}


def parse_tc(text: str) -> dict:
    rows = _need(re.findall(rf"^trial\s+\d+:\s+{FLOAT} sec rate .*# triangles: {FLOAT}", text, re.M),
                 "triangle-count trial lines ('trial  0: ... # triangles: ...')", text)
    m = re.search(r"^# of triangles: (\d+)", text, re.M)
    method = re.findall(r"^Method: (.*?)\s*$", text, re.M)
    return {"read_s": read_time(text), "seconds": [float(t) for t, _ in rows],
            "triangles": int(m.group(1)) if m else int(float(rows[0][1])),
            "method": " ".join(method[-1].split()) if method else None}


def parse_sssp(text: str) -> dict:
    rows = _need(re.findall(rf"^sssp15:\s+threads:\s*\d+ trial:\s*\d+ source\s+(\d+) time:\s*{FLOAT} sec", text, re.M),
                 "SSSP trial lines ('sssp15: ... source ... time: ...')", text)
    return {"read_s": read_time(text), "sources": sorted({int(s) for s, _ in rows}),
            "seconds": [float(t) for _, t in rows][1:]}   # the first call is cold


def parse_timed(text: str, mode: str) -> dict:
    """The results program's ``MODE seconds T1 ... TN`` line (bfs-level, bfs-parent)."""
    m = _need(re.findall(rf"^{mode} seconds((?:\s+{FLOAT[1:-1]})+)\s*$", text, re.M),
              f"'{mode} seconds ...' line", text)
    return {"read_s": None, "seconds": [float(t) for t in m[-1].split()]}


TIMED = ("bfs-level", "bfs-parent")   # (the rows timed through the results program)
PARSERS = {"bfs": parse_bfs, **{alg: parse_pagerank for alg in pc.PAGERANK}, "cc": parse_cc, "tc": parse_tc,
           "sssp": parse_sssp}


def parse_results(text: str) -> dict:
    """The results program's lines: ``bfs source S reached R maxlevel L levelsum T`` and so on."""
    out: dict = {}
    for line in text.splitlines():
        w = line.split()
        if not w or w[0] not in ("bfs", "sssp", "cc", "tc", "pagerank"):
            continue
        if w[0] == "pagerank":
            top = [p.split(":") for p in w[w.index("top") + 1:]]
            out["pagerank"] = {"iterations": int(w[2]), "top": [[int(i), float(r)] for i, r in top]}
        else:
            fields = dict(zip(w[1::2], w[2::2]))
            fields.pop("source", None)
            out[w[0]] = {k: int(v) for k, v in fields.items()}
    return out


def peer_result(alg: str, parsed: dict) -> dict:
    """What a demo's own output says about the result (see the module's docstring)."""
    if alg == "tc":
        return {"triangles": parsed["triangles"]}
    if alg == "cc" and parsed.get("components_g"):
        return {"components_g": parsed["components_g"]}
    if alg in pc.PAGERANK:
        return {"sum": parsed["std"]["sum"], "iterations": parsed["std"]["iterations"]}
    return {}


def peer_seconds(alg: str, parsed: dict) -> list:
    if alg in pc.PAGERANK:
        std = parsed["std"]
        return [t / std["iterations"] for t in std["seconds"]]
    return parsed["seconds"]


# ---------------------------------------------------------------------------- the comparison
def _demo_cmd(progs: dict, alg: str, g: pc.Graph, sources: str, results_exe: str | None, runs: int) -> list:
    if alg in TIMED:
        return [results_exe, g.mtx, g.source, alg, runs]
    return [progs[alg], g.mtx] + ([sources] if alg in ("bfs", "sssp") else [])


def _library_path() -> str:
    """LD_LIBRARY_PATH with the folder of the GraphBLAS library this process runs (the wheel's)
    first: the demos then run on the very library dspla uses, whichever venv they were linked
    against (a demo built beside a venv since removed would not start otherwise)."""
    import suitesparse_graphblas

    libs = os.path.join(os.path.dirname(os.path.dirname(suitesparse_graphblas.__file__)), "suitesparse_graphblas.libs")
    return os.pathsep.join(p for p in (libs, os.environ.get("LD_LIBRARY_PATH", "")) if p)


def compare(progs: dict, results_exe: str | None, graphs: dict, algs: list, repeats: int, runs: int, tmp: str,
            say) -> dict:
    """Per graph and algorithm, ``repeats`` rounds of (the demo, then ``runs`` dspla calls in this
    process with one GraphBLAS thread); medians over all runs, the ratio dspla / LAGraph."""
    import graphblas as gb
    env = {**os.environ, "OMP_NUM_THREADS": "1", "LD_LIBRARY_PATH": _library_path()}
    skipped = [a for a in algs if a in TIMED and not results_exe]
    algs = [a for a in algs if a in progs or (a in TIMED and results_exe)]
    threads = gb.ss.config["nthreads"]
    gb.ss.config["nthreads"] = 1
    out: dict = {"rows": [], "versions": {}}
    if skipped:
        out["skipped"] = f"{', '.join(skipped)}: not run (they time LAGraph's calls through --lagraph-results)"
    try:
        for g in graphs.values():
            A = sp.csr_array(sp.load_npz(g.npz))
            sources = os.path.join(tmp, f"{g.name}.sources.mtx")
            pc.write_sources(sources, g.source, runs)
            theirs_exact = parse_results(pc.run([results_exe, g.mtx, g.source], env)) if results_exe else {}
            state = {}
            fns = pc.functions(g.undirected)
            G = pc.structural(A) if set(algs) & set(pc.FRESH) else None
            for alg in algs:   # dspla: planned and warm, its result kept for the check
                ins = {"A": G} if alg in pc.FRESH else pc.inputs(alg, A, g.source)
                f = fns[alg]()
                f(**ins)   # planned; the second call is the first of a planned function (runtime/session.py)
                state[alg] = (f, ins, pc.summary(alg, f(**ins)))
            times: dict = {a: ([], []) for a in algs}   # per repeat: (dspla's, LAGraph's)
            seen: dict = {}

            def step(alg: str) -> None:
                text = pc.run(_demo_cmd(progs, alg, g, sources, results_exe, runs), env)
                parsed = parse_timed(text, alg) if alg in TIMED else PARSERS[alg](text)
                seen[alg] = parsed
                out["versions"] = out["versions"] or versions(text)
                f, ins, res = state[alg]
                times[alg][1].append(peer_seconds(alg, parsed))
                times[alg][0].append(pc.per_iteration(alg, pc.timed_calls(alg, f, ins, runs), res))
            pc.rounds(repeats, [(g.name, algs)], step, say)
            for alg in algs:
                exact = theirs_exact.get("pagerank" if alg in pc.PAGERANK else "bfs" if alg in TIMED else alg)
                out["rows"].append(_row(g, alg, times[alg], state[alg][2], seen[alg], exact))
    finally:
        gb.ss.config["nthreads"] = threads
    return out


def _row(g: pc.Graph, alg: str, times: tuple, ours: dict, parsed: dict, exact: dict | None) -> dict:
    mine, theirs = times
    row = {"graph": g.name, "algorithm": alg, "unit": "ms per iteration" if alg in pc.PAGERANK else "ms",
           **pc.ratio_row(sum(mine, []), sum(theirs, []), mine, theirs), "peer_read_s": parsed.get("read_s")}
    if alg in pc.PAGERANK:
        row.update(dspla_iterations=ours["iterations"], peer_iterations=parsed["std"]["iterations"])
    if alg == "tc":
        row["peer_method"] = parsed.get("method")
    if alg in TIMED:
        row["peer_sources"] = [g.source]   # (the results program's argument)
    elif alg in ("bfs", "sssp"):
        row["peer_sources"] = parsed["sources"]
        if parsed["sources"] != [g.source]:
            row["check"] = {"ok": False, "text": f"the demo ran from {parsed['sources']}, not {g.source}"}
            return row
    theirs_res = exact if exact else peer_result(alg, parsed)
    if alg == "cc" and "components_g" in theirs_res:
        ours = {**ours, "components_g": f"{ours['components']:.0g}"}
    ok, text = pc.check(alg, ours, theirs_res)
    if ok is None and not exact:
        text = f"not checked: {DEMOS.get(alg, 'the results program')} prints no result (--lagraph-results gives one)"
    row["check"] = {"ok": ok, "text": text, "from": "results program" if exact else DEMOS.get(alg, "results program")}
    return row


def table(section: dict) -> list:
    lines = ["medians in ms (PageRank: ms per iteration); dspla/LAGraph: of the medians, its range over the "
             "repeats, and of the minima",
             f"{'graph':<9} {'algorithm':<10} {'LAGraph':>8} {'dspla':>8} {'dspla/LAGraph':>13} {'per repeat':>12} "
             f"{'of minima':>9}  check"]
    for r in section["rows"]:
        per = r["ratio_by_repeat"]
        ok = {True: "same", False: "DIFFERENT", None: "-"}[r["check"]["ok"]]
        lines.append(f"{r['graph']:<9} {r['algorithm']:<10} {r['peer_ms']:>8.3f} {r['dspla_ms']:>8.3f} "
                     f"{r['ratio']:>13.2f} {min(per):>5.2f}-{max(per):<6.2f} {r['ratio_min']:>9.2f}  {ok}: "
                     f"{r['check']['text']}")
    return lines + ([section["skipped"]] if section.get("skipped") else [])
