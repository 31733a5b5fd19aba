"""Mini-batch GCN training (Demirci et al. §4.3.3): each step draws a batch of target nodes and a sampled
neighbourhood, and runs the same step program on that subgraph (its A, so the program's Â is
the sampled graph's normalised adjacency); the loss is averaged over the batch's targets.

Samplers (vectorised: one sort per hop, no loop per node or edge):

- ``neighbor`` (GraphSAGE-style): the targets keep up to fanout[0] random neighbours each; those
  neighbours keep up to fanout[1] of theirs, and so on for each layer;
- ``node``: the targets with their whole k-hop neighbourhood (every neighbour kept).

Rows of the subgraph belong to the processes that own them in one global row partition of the
full graph, computed once: with ``--partition stochastic-hypergraph`` the stochastic hypergraph
model built from batches drawn by the same sampler (SHP), otherwise the named method on the full
graph (e.g. ``hypergraph``: HP). Each batch is then planned with its rows' owners, so what a
batch moves is exactly its communication under that partition.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..analysis import comm_stats
from ..errors import UnknownNameError
from ..function import Function
from ..partition import partition
from .optim import make_optimizer
from .program import eval_program, training_program
from .trainer import Progress, TrainConfig, Trainer, epoch_seed


def sample_rows(A: sp.csr_array, rows: np.ndarray, k: int | None, rng) -> tuple[np.ndarray, np.ndarray]:
    """(row ids, column ids) of up to k random entries of each row in ``rows`` (all if k is None)."""
    indptr, indices = A.indptr, A.indices
    deg = (indptr[rows + 1] - indptr[rows]).astype(np.int64)
    total = int(deg.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    owner = np.repeat(np.arange(rows.size), deg)                   # which of ``rows`` each entry is in
    first = np.repeat(indptr[rows].astype(np.int64) - np.r_[0, np.cumsum(deg)[:-1]], deg)
    pos = first + np.arange(total)                                   # position in A.indices
    if k is not None:
        key = rng.random(total)
        order = np.lexsort((key, owner))                             # by row, random within a row
        start = np.r_[0, np.cumsum(deg)[:-1]]
        rank = np.empty(total, np.int64)
        rank[order] = np.arange(total) - np.repeat(start, deg)
        keep = rank < k
        owner, pos = owner[keep], pos[keep]
    return rows[owner].astype(np.int64), indices[pos].astype(np.int64)


@dataclass
class Sampler:
    """A batch's computation subgraph. ``kind``: 'neighbor' (fanout per hop) or 'node' (every
    neighbour); ``hops``: layers of the model; ``pool``: the nodes targets are drawn from."""

    batch_size: int
    kind: str = "neighbor"
    fanout: tuple = (10, 10)
    hops: int = 2
    pool: np.ndarray | None = None

    def __post_init__(self):
        if self.kind not in ("neighbor", "node"):
            raise UnknownNameError("sampler", self.kind, ["neighbor", "node"])
        if self.kind == "neighbor" and len(self.fanout) < self.hops:
            self.fanout = tuple(self.fanout) + (self.fanout[-1],) * (self.hops - len(self.fanout))

    def edges(self, A: sp.csr_array, targets: np.ndarray, rng) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, cols) of the sampled entries and the node set (targets first)."""
        n = A.shape[0]
        seen = np.zeros(n, dtype=bool)
        seen[targets] = True
        frontier = np.asarray(targets, dtype=np.int64)
        rs, cs, nodes = [], [], [frontier]
        for hop in range(self.hops):
            k = self.fanout[hop] if self.kind == "neighbor" else None
            r, c = sample_rows(A, frontier, k, rng)
            rs.append(r)
            cs.append(c)
            new = np.unique(c[~seen[c]])
            seen[new] = True
            nodes.append(new)
            frontier = new
            if not new.size:
                break
        return np.concatenate(rs), np.concatenate(cs), np.concatenate(nodes)

    def targets(self, n: int, rng) -> np.ndarray:
        pool = np.arange(n) if self.pool is None else self.pool
        return np.sort(rng.choice(pool, size=min(self.batch_size, pool.size), replace=False))

    def __call__(self, A, rng) -> sp.csr_matrix:
        """The batch as an n x n matrix of the rows it computes (for the stochastic hypergraph model)."""
        A = sp.csr_array(A)
        r, c, _ = self.edges(A, self.targets(A.shape[0], rng), rng)
        n = A.shape[0]
        return sp.csr_matrix((np.ones(r.size), (r, c)), shape=(n, n))

    def subgraph(self, A: sp.csr_array, targets: np.ndarray, rng):
        """(nodes, compact sampled adjacency over them): node i of the subgraph is nodes[i]."""
        r, c, nodes = self.edges(A, targets, rng)
        local = np.full(A.shape[0], -1, np.int64)
        local[nodes] = np.arange(nodes.size)
        m = nodes.size
        S = sp.csr_array((np.ones(r.size), (local[r], local[c])), shape=(m, m))
        S.sum_duplicates()
        S.data[:] = 1.0
        return nodes, S


def global_partition(A: sp.csr_array, P: int, method: str, sampler: Sampler, seed: int = 0, progress=None,
                     shp_error: float = 0.02):
    """Row owners of the full graph: SHP from the sampler's batches, or a full-graph method."""

    if P == 1:
        return np.zeros(A.shape[0], np.int64), {"method": "none"}
    pattern = sp.csr_array(A + sp.eye_array(A.shape[0], format="csr"))
    if method == "auto":   # batches are small and change every step: the cheap full-graph partition
        method = "graph"
    if method == "stochastic-hypergraph":
        res = partition(pattern, P, method, seed=seed, sampler=sampler, error=shp_error, max_batches=200,
                        cache=False, progress=progress)
    else:
        res = partition(pattern, P, method, seed=seed, progress=progress)
    return res.parts, {"method": method, "imbalance": float(res.imbalance), **(res.info or {})} \
        if hasattr(res, "info") else {"method": method}


class MiniBatchTrainer(Trainer):
    """Trainer over sampled batches; every epoch visits each training node once as a target, then
    evaluates the full graph without dropout (for the accuracies and the validation loss)."""

    def __init__(self, program, data=None, config: TrainConfig | None = None, comm=None, *, batch_size: int = 64,
                 sampler: str = "neighbor", fanout=(10, 10)):
        super().__init__(program, data, config, comm)
        self.batch_size = int(batch_size)
        self.sampler_kind, self.fanout = sampler, tuple(fanout)
        self.f_batch = Function(training_program(self.step_program, with_eval=False))
        self.f_eval = Function(eval_program(self.step_program))

    def fit(self):
        cfg, comm, rank, P = self.cfg, self.comm, self.rank, self.comm.size
        rng = np.random.default_rng(cfg.seed)
        parts = static = params = opt = None
        if rank == 0:
            d = self.data
            self.sampler = Sampler(self.batch_size, self.sampler_kind, self.fanout, 2, d.train_idx)
            t0 = time.perf_counter()
            parts, pinfo = global_partition(d.adjacency, P, cfg.partition, self.sampler, cfg.partition_seed,
                                            progress=None if cfg.progress else False)
            self.partition_info = {**pinfo, "seconds": time.perf_counter() - t0}
            static = self._static_inputs()
            params = self._init_params()
            opt = make_optimizer(cfg.optimizer, cfg.lr, self._weight_decay(),
                                 **({"momentum": cfg.momentum} if cfg.optimizer == "sgd" else {}))
        base = {"plan": self.plan, **({} if cfg.progress else {"progress": False})}
        eval_session = self.f_eval.session(comm, **base, partition="file", parts=parts)
        n_batches = comm.bcast(math.ceil(len(self.data.train_idx) / self.batch_size) if rank == 0 else None, 0)
        progress = Progress(cfg.epochs, cfg.progress and rank == 0, cfg.log_every)
        history, batch_words, batch_msgs, batch_sizes = [], [], [], []
        first_stats = last_stats = None
        t_train = time.perf_counter()
        for epoch in range(cfg.epochs):
            t0 = time.perf_counter()
            order = rng.permutation(self.data.train_idx) if rank == 0 else None
            losses = []
            for b in range(n_batches):
                inputs = sub_parts = None
                if rank == 0:
                    targets = np.sort(order[b * self.batch_size:(b + 1) * self.batch_size])
                    nodes, S = self.sampler.subgraph(self.data.adjacency, targets, rng)
                    inputs = self._batch_inputs(static, nodes, S, targets.size, params,
                                                epoch_seed(cfg.seed, epoch * n_batches + b))
                    sub_parts = parts[nodes]
                    batch_sizes.append(nodes.size)
                s = self.f_batch.session(comm, keep=False, **base, partition="file", parts=sub_parts)
                got = self._gather(s.run(inputs), ["loss"] + ["d" + p for p in self.info["params"]])
                if rank == 0:
                    st = s.last_stats
                    batch_words.append(st["words_sent_total"])
                    batch_msgs.append(st["messages_sent_total"])
                    losses.append(float(got["loss"][0, 0]))
                    opt.step(params, {p: got["d" + p] for p in self.info["params"]})
            ev = eval_session.run({**{k: static[k] for k in ("A", "X")},
                                   **{k: v.copy() for k, v in params.items()}} if rank == 0 else None)
            logits = self._gather(ev, ["logits"])["logits"]
            stop = False
            if rank == 0:
                last_stats = eval_session.last_stats
                first_stats = first_stats or last_stats   # the run that planned: its planning times
                rec = {"epoch": epoch + 1, "loss": float(np.mean(losses)), **self._metrics(logits),
                       "time_s": time.perf_counter() - t0}
                history.append(rec)
                progress.update(epoch, rec)
                stop = self._early_stop(history)
            if comm.bcast(stop, 0):
                break
        train_s = time.perf_counter() - t_train
        ev = eval_session.run({**{k: static[k] for k in ("A", "X")},
                               **{k: v.copy() for k, v in params.items()}} if rank == 0 else None)
        logits = self._gather(ev, ["logits"])["logits"]
        if rank != 0:
            return None
        final = self._metrics(logits)
        progress.close()
        r = self._result(history, final, logits, params, first_stats or eval_session.last_stats,
                         last_stats or eval_session.last_stats, train_s, False)
        r["partition"] = self.partition_info.get("method")
        # the node sampler keeps every neighbour: a fanout would describe a sampling that did not happen
        fanout = list(self.sampler.fanout[:self.sampler.hops]) if self.sampler_kind == "neighbor" else None
        r["minibatch"] = {"batch_size": self.batch_size, "sampler": self.sampler_kind,
                          "fanout": fanout, "batches": len(batch_words),
                          "subgraph_nodes_avg": float(np.mean(batch_sizes)) if batch_sizes else 0.0,
                          "words_per_batch_avg": float(np.mean(batch_words)) if batch_words else 0.0,
                          "messages_per_batch_avg": float(np.mean(batch_msgs)) if batch_msgs else 0.0,
                          "partition": self.partition_info}
        return r

    def _batch_inputs(self, static, nodes, S, n_targets, params, seed):
        X = static["X"][nodes]
        Y = static["Y"][nodes]
        T = np.zeros((nodes.size, 1))
        T[:n_targets] = 1.0 / n_targets       # targets come first in ``nodes``
        out = {"A": S, "X": X, "Y": Y, "T": T, **{k: v.copy() for k, v in params.items()}}
        if self.info["uses_seed"]:
            out["seed"] = np.array([[seed]], dtype=np.int64)
        return out


def batch_volumes(A, parts_by_name: dict, sampler: Sampler, batches: int, P: int, seed: int = 12345,
                  progress=None) -> dict:
    """Average communication volume (rows of H sent between processes for one product, i.e. words
    per feature column) per batch under each partition, over the SAME random batches."""

    rng = np.random.default_rng(seed)
    A = sp.csr_array(A)
    A.shape[0]
    vols = {k: [] for k in parts_by_name}
    msgs = {k: [] for k in parts_by_name}
    for b in range(batches):
        S = sp.csr_array(sampler(A, rng))      # the rows the batch computes (self loops are local)
        for k, parts in parts_by_name.items():
            st = comm_stats(S, parts, P, b_parts=parts)
            vols[k].append(st.volume_total)
            msgs[k].append(st.messages_total)
        if progress and (b + 1) % 100 == 0:
            progress(b + 1)
    return {k: {"volume_avg": float(np.mean(v)), "messages_avg": float(np.mean(msgs[k]))} for k, v in vols.items()}

