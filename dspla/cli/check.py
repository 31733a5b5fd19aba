"""dspla check FILE: parse and type-check an expression file without data."""
from __future__ import annotations

import sys

from ..frontend.parser import parse_file
from ..function import Function
from ..ir.lint import lint_warnings
from .arguments import add_plugin_option, load_plugins


def register(sub, common):
    p = sub.add_parser("check", parents=[common], help="parse and type-check a .dspla file without data")
    p.add_argument("file", help="the program: an expression file (.dspla; lang/README.md)")
    add_plugin_option(p)
    p.set_defaults(func=run)


def run(args):
    load_plugins(args.plugin)
    f = Function(parse_file(args.file))
    ins = ", ".join(f"{n.attr('name')}: {n.type}{_default(n.attr('default'))}" for n in f.inputs)
    outs = ", ".join(f"{k}: {v.type}" for k, v in f.program.outputs)
    print(f"{args.file}: ok\n  inputs:  {ins}\n  outputs: {outs}")
    for line in lint_warnings(f.source_program):
        print(line, file=sys.stderr)


def _default(v) -> str:
    """An input's default as the file language writes it (none: nothing)."""
    if v is None:
        return ""
    return " = " + (("true" if v else "false") if isinstance(v, bool) else repr(v))
