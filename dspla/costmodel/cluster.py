"""A cluster as the cost model sees it: where each rank sits (node, socket) and what a word
costs between two ranks, by level (shared memory inside a socket, between the sockets of a
node, the network), with the network injection bandwidth shared by the ranks of a socket.

Ranks are placed as launchers place them by default: consecutive ranks fill a node, socket by
socket. The description is a TOML file (``dspla/data/cluster-*.toml`` are the shipped ones):

    name = "..."; source = "..."; ranks_per_node = 6; sockets_per_node = 2; word_bytes = 4
    [socket]  alpha = 5e-6   bandwidth = 50e9  overhead = 1e-6   # latency and cost per message; bytes/s
    [node]    alpha = 8e-6   bandwidth = 64e9
    [network] alpha = 1.5e-5 bandwidth = 12.5e9  injection = 12.5e9   # injection: per socket, shared
    [compute] spmm = 5e10  spmm_row = 1e11       # local SpMM: nonzeros x columns per second, and
                                                 # output rows x columns per second (optional)

Node-aware counting: a collective over groups of a grid axis runs as rings (the pipelined rings
CAGNET's NCCL broadcasts use); a member whose ring successor sits on another node injects its
words into the network, and the members of one socket that do so at the same time share the
socket's injection bandwidth. Point-to-point traffic is charged per level, the socket's
injected bytes over its injection bandwidth bounding each of its ranks.
"""
from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from ..errors import DsplaError

if sys.version_info >= (3, 11):
    import tomllib
else:   # the same parser, from PyPI (a dependency there)
    import tomli as tomllib

LEVELS = ("socket", "node", "network")


class ClusterError(DsplaError):
    pass


@dataclass(frozen=True)
class Level:
    alpha: float        # s of latency per message (per collective step)
    bandwidth: float    # bytes/s one rank gets on this level's link
    overhead: float = 0.0   # s a rank spends per message it sends or receives (LogGP's o); 0: alpha


@dataclass(frozen=True)
class Cluster:
    name: str
    ranks_per_node: int
    sockets_per_node: int
    levels: dict          # "socket" | "node" | "network" -> Level
    injection: float      # bytes/s into the network per socket, shared by its ranks
    spmm_rate: float      # nonzeros x columns per second of local SpMM on one rank
    word_bytes: int = 4
    spmm_row: float = 0.0  # output rows x columns per second of local SpMM (0: not priced)
    source: str = ""
    path: str = field(default="", compare=False)

    @property
    def ranks_per_socket(self) -> int:
        return max(1, self.ranks_per_node // self.sockets_per_node)

    def node(self, ranks) -> np.ndarray:
        return np.asarray(ranks) // self.ranks_per_node

    def socket(self, ranks) -> np.ndarray:
        """Global socket id of each rank."""
        r = np.asarray(ranks)
        return r // self.ranks_per_node * self.sockets_per_node + (r % self.ranks_per_node) // self.ranks_per_socket

    def level(self, a, b) -> np.ndarray:
        """0 (same socket), 1 (same node), 2 (network) for each pair of ranks."""
        a, b = np.asarray(a), np.asarray(b)
        return np.where(self.node(a) != self.node(b), 2, np.where(self.socket(a) != self.socket(b), 1, 0))

    def lvl(self, i: int) -> Level:
        return self.levels[LEVELS[i]]

    # ------------------------------------------------------------------ collectives
    def ring_seconds_per_word(self, P: int, dims: tuple, axis: int) -> float:
        """Seconds per word of the slowest ring when every group along ``axis`` of the row-major
        grid ``dims`` (product P) runs a ring collective at once."""
        g = dims[axis]
        if g < 2:
            return 0.0
        stride = int(np.prod(dims[axis + 1:], dtype=np.int64))
        r = np.arange(P)
        coord = (r // stride) % g
        succ = r + (((coord + 1) % g) - coord) * stride
        lv = self.level(r, succ)
        per = np.array([1.0 / self.lvl(i).bandwidth for i in range(3)])[lv]
        inter = lv == 2
        if inter.any():   # ranks of a socket injecting at once share its link
            k = np.bincount(self.socket(r[inter]), minlength=1)
            share = k[self.socket(r[inter])] / self.injection
            per[inter] = np.maximum(per[inter], share)
        return float(per.max()) * self.word_bytes

    def group_alpha(self, P: int, dims: tuple, axis: int) -> float:
        """Latency of one step of a collective along ``axis``: that of the slowest level a group spans."""
        g = dims[axis]
        if g < 2:
            return 0.0
        stride = int(np.prod(dims[axis + 1:], dtype=np.int64))
        first, last = 0, (g - 1) * stride
        worst = int(self.level(first, last).max())
        if P > self.ranks_per_node and stride * g > self.ranks_per_node:
            worst = 2
        return self.lvl(worst).alpha

    # ------------------------------------------------------------------ point to point
    def p2p_seconds(self, P: int, src: np.ndarray, dst: np.ndarray, words: np.ndarray) -> np.ndarray:
        """Per rank, the time of one round of point-to-point messages (src -> dst, words each), as
        LogGP counts it: the messages are in flight together, so a rank pays one latency (its
        slowest level's) plus, per message it sends or receives, the overhead and its bytes over
        the level's bandwidth; each rank is also bounded by its socket's injected (and ejected)
        bytes over the injection bandwidth."""
        src, dst, words = np.asarray(src, np.int64), np.asarray(dst, np.int64), np.asarray(words, np.float64)
        lv = self.level(src, dst)
        alpha = np.array([self.lvl(i).overhead or self.lvl(i).alpha for i in range(3)])[lv]
        inv_bw = np.array([1.0 / self.lvl(i).bandwidth for i in range(3)])[lv]
        byts = words * self.word_bytes
        t = np.zeros(P)
        for side in (src, dst):   # a rank pays for what it sends and for what it receives
            t = np.maximum(t, np.bincount(side, weights=alpha + byts * inv_bw, minlength=P))
        inter = lv == 2
        nsock = int(self.socket(P - 1)) + 1
        inj = np.zeros(nsock)
        for side in (src, dst):
            inj = np.maximum(inj, np.bincount(self.socket(side[inter]), weights=byts[inter], minlength=nsock))
        lat = np.maximum(np.bincount(src, weights=alpha, minlength=P), np.bincount(dst, weights=alpha, minlength=P))
        once = np.zeros(P)
        for side in (src, dst):
            np.maximum.at(once, side, np.array([self.lvl(i).alpha for i in range(3)])[lv])
        return once + np.maximum(t, lat + inj[self.socket(np.arange(P))] / self.injection)

    def spmm_seconds(self, nnz_times_cols, rows_times_cols=0.0):
        """Local SpMM: a cost per nonzero x column and one per output row x column (the rows
        each block multiplies into): nnz/row x slower per nonzero on sparser blocks."""
        t = np.asarray(nnz_times_cols, dtype=np.float64) / self.spmm_rate
        if self.spmm_row:
            t = t + np.asarray(rows_times_cols, dtype=np.float64) / self.spmm_row
        return t if t.ndim else float(t)


def _num(d: dict, key: str, where: str, path: str) -> float:
    v = d.get(key)
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v <= 0:
        raise ClusterError(f"{path}: [{where}] {key} must be a positive number (got {v!r})")
    return float(v)


def parse(text: str, path: str = "<cluster>") -> Cluster:
    try:
        d = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ClusterError(f"{path}: {e}") from None
    known = {"name", "source", "ranks_per_node", "sockets_per_node", "word_bytes", "compute", *LEVELS}
    extra = sorted(set(d) - known)
    if extra:
        raise ClusterError(f"{path}: unknown key(s) {', '.join(extra)}; valid: {', '.join(sorted(known))}")
    for sect in (*LEVELS, "compute"):
        if not isinstance(d.get(sect), dict):
            raise ClusterError(f"{path}: missing section [{sect}]")
    rpn, sockets = d.get("ranks_per_node"), d.get("sockets_per_node", 1)
    if not isinstance(rpn, int) or rpn < 1 or not isinstance(sockets, int) or sockets < 1 or rpn % sockets:
        raise ClusterError(f"{path}: ranks_per_node (got {rpn!r}) and sockets_per_node (got {sockets!r}) must be "
                           "positive integers, the first a multiple of the second")
    levels = {lv: Level(_num(d[lv], "alpha", lv, path), _num(d[lv], "bandwidth", lv, path),
                        _num(d[lv], "overhead", lv, path) if "overhead" in d[lv] else 0.0) for lv in LEVELS}
    return Cluster(name=str(d.get("name", os.path.basename(path))), ranks_per_node=rpn, sockets_per_node=sockets,
                   levels=levels, injection=_num(d["network"], "injection", "network", path),
                   spmm_rate=_num(d["compute"], "spmm", "compute", path), word_bytes=int(d.get("word_bytes", 8)),
                   source=str(d.get("source", "")), path=path,
                   spmm_row=_num(d["compute"], "spmm_row", "compute", path) if "spmm_row" in d["compute"] else 0.0)


SHIPPED = ("summit", "perlmutter")


def load(name_or_path: str) -> Cluster:
    """A cluster description: a shipped one by name (summit, perlmutter) or a TOML file."""
    if name_or_path in SHIPPED:
        res = resources.files("dspla").joinpath("data", f"cluster-{name_or_path}.toml")
        return parse(res.read_text(), f"cluster-{name_or_path}.toml")
    if not os.path.isfile(name_or_path):
        raise ClusterError(f"no cluster description {name_or_path!r}: give a TOML file or one of "
                           f"{', '.join(SHIPPED)}")
    with open(name_or_path, encoding="utf-8") as f:
        return parse(f.read(), name_or_path)


def dumps(c: Cluster) -> str:
    """The TOML text of a description (what ``dspla calibrate --cluster`` writes)."""
    lines = [f'name = "{c.name}"', f'source = "{c.source}"', f"ranks_per_node = {c.ranks_per_node}",
             f"sockets_per_node = {c.sockets_per_node}", f"word_bytes = {c.word_bytes}", ""]
    for lv in LEVELS:
        L = c.levels[lv]
        lines += [f"[{lv}]", f"alpha = {L.alpha!r}", f"bandwidth = {L.bandwidth!r}"]
        if L.overhead:
            lines.append(f"overhead = {L.overhead!r}")
        if lv == "network":
            lines.append(f"injection = {c.injection!r}")
        lines.append("")
    lines += ["[compute]", f"spmm = {c.spmm_rate!r}"] + ([f"spmm_row = {c.spmm_row!r}"] if c.spmm_row else []) + [""]
    return "\n".join(lines)
