"""Predicted GCN scaling on Summit: dspla's choice against the best of CAGNET's four.

    dspla bench scaling [--cluster summit] [--np 16,64,256,1024,4096] [--json F] [--plot F]

Nothing runs on the cluster: ``dspla scaling`` counts one epoch of a 3-layer GCN per plan and P
(costmodel/scaling.py) on soc-Slashdot0902 (exact counts from random and graph partitions,
vertexcut on SPAC's edge partition; widths 128,16,16,8) and on R-MAT graphs shaped like the
CAGNET paper's Reddit, Amazon and Protein
(its Table III: n, nnz, features, 16, 16, labels; expected counts over the R-MAT degrees). For each
graph and P: the chosen plan, the best of CAGNET's four (1D, 1.5D with c^2 | P, 2D, 3D) and the
ratio of their predicted times. A prediction, not a measurement.
"""
from __future__ import annotations

import argparse
import json
import os

from dspla.cli.scaling import shape_of
from dspla.costmodel import cluster as clusters
from dspla.costmodel.scaling import scaling
from dspla.formats.files import atomic_write

from .common import ROOT, git_commit

SLASHDOT = os.path.join(ROOT, "..", "shared", "datasets", "snap", "soc-Slashdot0902.txt.gz")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="dspla bench scaling", description=__doc__.splitlines()[0])
    ap.add_argument("--cluster", default="summit")
    ap.add_argument("--np", default="16,64,256,1024,4096")
    ap.add_argument("--json")
    ap.add_argument("--plot")
    args = ap.parse_args(argv)
    Ps = [int(x) for x in args.np.split(",")]
    cl = clusters.load(args.cluster)
    cases = []
    if os.path.exists(SLASHDOT):
        sh, _ = shape_of(SLASHDOT)
        sh = type(sh)("soc-Slashdot0902", sh.n, sh.nnz, sh.A)
        cases += [(sh, [128, 16, 16, 8], "random", "spac"), (sh, [128, 16, 16, 8], "graph", None)]
    for name in ("reddit", "amazon", "protein"):
        sh, f = shape_of(name)
        cases.append((sh, f, "random", None))
    docs = []
    print(f"{'graph':<18} {'partition':<9} " + " ".join(f"{P:>24}" for P in Ps))
    for sh, f, method, edge in cases:
        rows = scaling(sh, Ps, f, cl, method=method, edge=edge)
        docs.append({"graph": sh.name, "n": sh.n, "nnz": sh.nnz, "f": f, "partition": method, "cluster": cl.name,
                     "rows": rows})
        print(f"{sh.name:<18} {method:<9} " + " ".join(f"{r['chosen'][:18]:>18} {r['ratio']:>4.2f}x" for r in rows))
    out = {"benchmark": "scaling", "commit": git_commit(), "cluster": cl.name, "P": Ps, "cases": docs}
    if args.json:
        with atomic_write(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    if args.plot:
        from dspla import plot as plots  # matplotlib only when drawing
        plots.save(plots.scaling(out), args.plot)
    return 0
