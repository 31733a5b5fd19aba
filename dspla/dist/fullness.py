"""Which values are provably full (every entry present), proved at planning time.

Messages of a full operand carry values only (zero-copy into GraphBLAS); others carry a
presence bitmap too. The receiver must know which before the message arrives, so the proof is
made once, from the op rules and the actual static data, never per iteration.
"""
from __future__ import annotations

from ..ir import Node, Op


class Facts:
    """full: every entry present; rows: every row has an entry; cols: every column has one."""
    __slots__ = ("full", "rows", "cols")

    def __init__(self, full=False, rows=False, cols=False):
        self.full, self.rows, self.cols = full, rows or full, cols or full


def of_matrix(M) -> Facts:
    from ..exec.gbops import occupied

    if M.nvals == M.nrows * M.ncols:
        return Facts(True)
    return Facts(False, occupied(M, "rows").nvals == M.nrows, occupied(M, "cols").nvals == M.ncols)


def prove(order: list[Node], static: dict) -> dict[int, Facts]:
    """``static``: id(node) -> its computed GraphBLAS value, for the nodes computed at planning."""
    f: dict[int, Facts] = {}
    for n in order:
        if id(n) in static:
            f[id(n)] = of_matrix(static[id(n)])
            continue
        a = [f[id(x)] for x in n.args]
        op = n.op
        if op is Op.INPUT:
            full = n.type.kind.value == "dense"  # dense inputs are checked full at bind time
            f[id(n)] = Facts(full)
        elif op is Op.MXM:
            x, y = a
            f[id(n)] = Facts((x.rows and y.full) or (x.full and y.cols), rows=x.rows and y.full,
                             cols=x.full and y.cols)
        elif op is Op.EWISE_ADD:
            x, y = a
            f[id(n)] = Facts(x.full or y.full, x.rows or y.rows, x.cols or y.cols)
        elif op is Op.EWISE_MULT:
            x, y = a
            f[id(n)] = Facts(x.full and y.full)
        elif op in (Op.APPLY, Op.APPLY_BIND, Op.CAST):
            f[id(n)] = a[0]
        elif op is Op.TRANSPOSE:
            f[id(n)] = Facts(a[0].full, a[0].cols, a[0].rows)
        elif op is Op.REDUCE:
            axis = n.attr("axis")
            f[id(n)] = Facts(a[0].rows if axis == "rows" else a[0].cols if axis == "cols" else a[0].rows)
        else:  # SELECT, MASK, IDENTITY (static anyway): nothing proved
            f[id(n)] = Facts(False)
    return f
