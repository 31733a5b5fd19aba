"""dspla run FILE --input NAME=PATH ... --out result.npz"""
from __future__ import annotations

import time

from .common import parse_inputs


def register(sub, common):
    p = sub.add_parser("run", parents=[common], help="run a .dspla program on data files")
    p.add_argument("file")
    p.add_argument("--input", "-i", action="append", metavar="NAME=PATH",
                   help="an input: .mtx/.mtx.gz, .npy, or FILE.npz:ARRAY (repeatable)")
    p.add_argument("--out", "-o", help="write every output to this .npz (COO arrays, plus dense when full)")
    p.set_defaults(func=run)


def run(args):
    from ..frontend.parser import parse_file
    from ..function import Function
    from ..io import read_input, write_results

    f = Function(parse_file(args.file))
    specs = parse_inputs(args.input)
    kinds = {n.attr("name"): n.type.kind.value for n in f.inputs}
    data = {name: read_input(spec, kinds.get(name, "dense")) for name, spec in specs.items()}
    t0 = time.perf_counter()
    out = f(**data)
    dt = time.perf_counter() - t0
    for name, arr in out.items():
        print(f"{name}: {arr.shape[0]}x{arr.shape[1]} {arr.dtype}, {arr.nvals} present")
    if args.out:
        write_results(args.out, out)
        print(f"wrote {args.out} ({dt:.3f} s)")
