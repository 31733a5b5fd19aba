"""A Program: named outputs over a DAG of Nodes, plus its declared inputs.

Printing linearises the DAG into SSA form (one line per node, with the user's names and the
source location), which is what ``explain`` shows.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .node import Node, Op


@dataclass(frozen=True, eq=False)
class Program:
    outputs: tuple[tuple[str, Node], ...]
    declared: tuple[Node, ...] = ()          # INPUT nodes in declaration order (may be unused)
    source: str | None = field(default=None, compare=False)  # the file it came from, if any

    def __eq__(self, other) -> bool:
        """Same outputs computed the same way from the same inputs (declaration order aside)."""
        if not isinstance(other, Program):
            return NotImplemented
        return self.outputs == other.outputs and set(self.inputs) == set(other.inputs)

    def __hash__(self) -> int:
        return hash(self.outputs)

    @property
    def inputs(self) -> tuple[Node, ...]:
        """Every input the program takes: declared ones first, then any others reached."""
        got = self.__dict__.get("_inputs")
        if got is None:
            seen = {n.attr("name"): n for n in self.declared}
            for n in self.toposort():
                if n.op is Op.INPUT:
                    seen.setdefault(n.attr("name"), n)
            got = tuple(seen.values())
            object.__setattr__(self, "_inputs", got)
        return got

    def toposort(self) -> list[Node]:
        """Nodes reachable from the outputs, every node after its arguments (iterative DFS).
        Computed once per program (nodes are immutable; a compilation asks ~80 times); each
        caller gets its own list."""
        order = self.__dict__.get("_order")
        if order is None:
            order = self._toposort()
            object.__setattr__(self, "_order", tuple(order))
        return list(order)

    def _toposort(self) -> list[Node]:
        order, done = [], set()
        for _, root in self.outputs:
            stack = [(root, False)]
            while stack:
                node, expanded = stack.pop()
                if id(node) in done:
                    continue
                if expanded:
                    done.add(id(node))
                    order.append(node)
                    continue
                stack.append((node, True))
                for a in reversed(node.args):
                    if id(a) not in done:
                        stack.append((a, False))
        return order

    def users(self) -> dict[int, list[Node]]:
        """id(node) -> the nodes that take it as an argument."""
        out: dict[int, list[Node]] = {}
        for n in self.toposort():
            for a in n.args:
                out.setdefault(id(a), []).append(n)
        return out

    def use_counts(self) -> dict[int, int]:
        """id(node) -> how many times it is read: as an argument, or as an output."""
        out: dict[int, int] = {}
        for n in self.toposort():
            for a in n.args:
                out[id(a)] = out.get(id(a), 0) + 1
        for _, n in self.outputs:
            out[id(n)] = out.get(id(n), 0) + 1
        return out

    def map_outputs(self, fn) -> "Program":
        return Program(tuple((k, fn(v)) for k, v in self.outputs), self.declared, self.source)

    def names(self) -> dict[int, str]:
        """An SSA name for every node: inputs by name, named values by name (made unique), else %i.
        Computed once per program; each caller gets its own dict."""
        got = self.__dict__.get("_names")
        if got is None:
            got = self._names()
            object.__setattr__(self, "_names", got)
        return dict(got)

    def _names(self) -> dict[int, str]:
        names, used, tmp = {}, set(), 0
        for n in self.inputs:
            names[id(n)] = n.attr("name")
            used.add(n.attr("name"))
        out_name = {}
        for k, v in self.outputs:
            out_name.setdefault(id(v), k)
        for n in self.toposort():
            if id(n) in names:
                continue
            base = n.name or out_name.get(id(n))
            if base and base not in used:
                names[id(n)] = base
            elif base:
                k = 2
                while f"{base}_{k}" in used:
                    k += 1
                names[id(n)] = f"{base}_{k}"
            else:
                names[id(n)] = f"%{tmp}"
                tmp += 1
            used.add(names[id(n)])
        return names

    def __str__(self) -> str:
        names = self.names()
        head = ", ".join(f"{names[id(n)]}: {n.attr('role')} {n.type}" for n in self.inputs)
        lines = [f"program({head}) {{"]
        rows = []
        for n in self.toposort():
            if n.op is Op.INPUT:
                continue
            rhs = f"{n.op_text()}({', '.join(names[id(a)] for a in n.args)})"
            rows.append((f"  {names[id(n)]} = {rhs}", f": {n.type}", f"# {n.span}" if n.span else ""))
            for key, sub in n.attrs:   # a loop's condition and body, indented under it
                if isinstance(sub, Program):
                    rows.append((f"    {key} " + str(sub).replace("\n", "\n    "), None, ""))
        w0 = max((len(r[0]) for r in rows if r[1] is not None), default=0)
        w1 = max((len(r[1]) for r in rows if r[1] is not None), default=0)
        lines += [r[0] if r[1] is None else f"{r[0]:<{w0}}  {r[1]:<{w1}}  {r[2]}".rstrip() for r in rows]
        outs = ", ".join(k if names[id(v)] == k else f"{k}={names[id(v)]}" for k, v in self.outputs)
        lines.append(f"  return {outs}")
        lines.append("}")
        return "\n".join(lines)
