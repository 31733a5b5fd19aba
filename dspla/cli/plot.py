"""dspla plot KIND FILE [-o OUT.png|.svg]: a figure from the JSON a dspla command wrote."""
from __future__ import annotations

import os

from .. import plot as plots
from ..formats.files import check_writable

HELP = {"comm-stats": "dspla comm-stats --json records: volume and messages per process vs P, per method",
        "stats": "dspla run --stats: per-rank words, messages, compute/pack/wait time, peak memory",
        "train": "dspla train --json: loss and accuracy per epoch",
        "planner": "dspla bench planner --json: predicted vs measured, plan times vs K"}


def register(sub, common):
    p = sub.add_parser("plot", parents=[common], help="draw a figure (PNG/SVG) from a dspla JSON file",
                       description="Figures from the JSON dspla writes: "
                                   + "; ".join(f"{k}: {v}" for k, v in HELP.items()))
    p.add_argument("kind", choices=plots.KINDS, help="which JSON: " + ", ".join(plots.KINDS))
    p.add_argument("file", help="the JSON file")
    p.add_argument("-o", "--out", help="the figure, .png or .svg (default: FILE with .png)")
    p.set_defaults(func=run)


def run(args):
    out = args.out or os.path.splitext(args.file)[0] + ".png"
    check_writable(out, "figure (--out)", inputs=[args.file])
    fig = plots.PLOTS[args.kind](args.file)
    plots.save(fig, out)
    print(f"wrote {out}")
    return 0
