"""dspla explain FILE: the program after the compiler's passes."""
from __future__ import annotations


def register(sub, common):
    p = sub.add_parser("explain", parents=[common], help="show a program after the compiler's passes")
    p.add_argument("file")
    p.set_defaults(func=run)


def run(args):
    from ..function import Function
    from ..frontend.parser import parse_file

    print(Function(parse_file(args.file)).explain())
