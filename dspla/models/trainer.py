"""Training a GCN step program on 1 or P processes.

Every rank runs the same loop; rank 0 holds the data, the parameters and the optimizer:

    for each epoch:
        outputs = step.run(inputs on rank 0)      # every rank: forward + backward, distributed
        rank 0: metrics from eval_logits, optimizer step on the gradients, checkpoint
        stop = bcast(early-stopping decision)

The program the trainer runs is the user's step with its ``logits`` replaced by ``eval_logits``
(the same forward without dropout, see dspla.models.program), so one distributed run per epoch
gives the update and the accuracies of the current weights. The sparse inputs (A, X) and the
labels and weights (Y, T) are the same Python objects every epoch, so the session plans once and
sends them once; each epoch sends the parameters and the 1 x 1 dropout seed only.

Dropout seeds are a function of (--seed, epoch) only, and the masks of (seed, global row, global
column), so P = 1, 2, 4 processes take the same steps up to floating-point summation order.
"""
from __future__ import annotations

import math
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from .. import verbosity as log
from ..errors import DsplaError, say_warning
from ..function import Function
from ..ir import Op, Program
from ..ir.types import Kind
from ..plan.explain import partition_lines
from ..runtime.failure import on_root
from . import checkpoint as ckpt
from .optim import make_optimizer
from .program import check_step, differentiate, set_dropout, training_program

if TYPE_CHECKING:
    from ..runtime.comm import Comm
    from .data import NodeData, ShardedData


@dataclass
class TrainConfig:
    epochs: int = 200
    lr: float = 0.01
    weight_decay: float = 5e-4
    weight_decay_on: str = "first"     # "first": the first declared parameter (Kipf & Welling); "all"
    hidden: int = 16
    dropout: float | None = None       # None: as written in the program
    seed: int = 0
    optimizer: str = "adam"
    momentum: float = 0.0
    early_stopping: int = 0            # window N: stop when the val loss exceeds the mean of the previous N
    checkpoint: str | None = None
    checkpoint_every: int = 10
    resume: bool = False
    plan: str | None = None            # None: the runtime's default (auto when the planner provides it)
    partition: str = "auto"
    partition_seed: int = 0
    progress: bool = True
    log_every: int | None = None       # non-terminal progress: a line every N epochs
    explain: bool = False              # print the distributed plan (rank 0, stderr) once it is made
    partition_notes: bool = True       # else: how the partition was chosen (rank 0, stderr), once
    extra_options: dict = field(default_factory=dict)

    def public(self) -> dict:
        d = asdict(self)
        d.pop("extra_options")
        return d


def default_plan() -> str:
    return "auto"   # the planner's choice by predicted time


def epoch_seed(seed: int, epoch: int) -> int:
    """The dropout seed of an epoch: even, so the program's ``seed + 1`` never meets another epoch's."""
    return 2 * (int(seed) * 1_000_003 + int(epoch))


def glorot(shape, rng) -> np.ndarray:
    """Glorot & Bengio uniform initialisation (Kipf & Welling's)."""
    limit = math.sqrt(6.0 / (shape[0] + shape[1]))
    return rng.uniform(-limit, limit, size=shape)


def log_softmax_np(Z: np.ndarray) -> np.ndarray:
    Z = Z - Z.max(axis=1, keepdims=True)
    return Z - np.log(np.exp(Z).sum(axis=1, keepdims=True))


class Progress:
    """One line per epoch on a terminal (rewritten in place), else a line every ``every`` epochs."""

    def __init__(self, total: int, enabled: bool = True, every: int | None = None, stream=None):
        self.total, self.enabled = total, enabled and log.progress(None) is not False   # dspla.quiet()
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every = every or (1 if self.tty else max(1, total // 20))
        self.t0 = time.perf_counter()

    def update(self, epoch: int, rec: dict):
        if not self.enabled:
            return
        done = epoch + 1
        if not self.tty and done % self.every and done != self.total:
            return
        w = 24
        fill = int(w * done / max(1, self.total))
        bar = "=" * fill + (">" if fill < w else "") + " " * max(0, w - fill - 1)
        msg = (f"epoch {done:>{len(str(self.total))}}/{self.total} [{bar}] loss {rec['loss']:.4f} "
               f"train {rec['train_acc']:.3f} val {rec['val_acc']:.3f} (val loss {rec['val_loss']:.4f}) "
               f"{rec['time_s'] * 1e3:.1f} ms/epoch")
        if self.tty:
            self.stream.write("\r" + msg + ("\n" if done == self.total else ""))
        else:
            self.stream.write(msg + "\n")
        self.stream.flush()

    def note(self, text: str):
        if self.enabled:
            self.stream.write(("\n" if self.tty else "") + text.rstrip() + "\n")
            self.stream.flush()

    def close(self, note: str | None = None):
        if self.enabled:
            if self.tty:
                self.stream.write("\n")
            if note:
                self.stream.write(note + "\n")
            self.stream.flush()


def dropout_probabilities(program: Program) -> list[float]:
    """The p of every dropout_mask of ``program``, distinct, ascending ([]: it has none)."""
    return sorted({float(n.attr("p")) for n in program.toposort() if n.op is Op.DROPOUT_MASK})


class Trainer:
    """``Trainer(step, data, config, comm).fit()``; every rank constructs and calls it, ``data``
    (a dspla.models.data.NodeData) is needed on rank 0 only. ``step`` is a step program: a
    ``dp.function(...)`` or a Program (``dspla.frontend.parser.parse_file``). ``fit`` returns the
    result dict on rank 0 and None elsewhere."""

    def __init__(self, program: Program | Function, data: NodeData | ShardedData | None = None,
                 config: TrainConfig | None = None, comm: Comm | None = None, sharded: dict | None = None) -> None:
        """``sharded``: the inputs A, X, Y, T as distributed values (dspla.load_shards), on every
        rank; ``data`` (rank 0) then holds only what the metrics need (models.data.ShardedData)."""
        cfg = self.cfg = config or TrainConfig()
        if isinstance(program, Function):   # dp.function(...): the program it was built from
            program = program.source_program
        if not isinstance(program, Program):
            raise DsplaError(f"Trainer takes a step program (a dp.function(...) or a parsed .dspla file), got "
                             f"{type(program).__name__}")
        program = differentiate(program)     # a forward-only program: its gradients by reverse mode
        self.sharded = sharded
        self.warnings: list[str] = []         # (rank 0 prints them; the result lists them)
        self.resumed_from: int | None = None  # the checkpoint's epoch when fit resumed from one
        if cfg.dropout is not None:
            if cfg.dropout > 0 and not dropout_probabilities(program):
                self.warnings.append(f"the step program has no dropout_mask, so dropout {cfg.dropout} "
                                     "(--dropout) has no effect")
            program = set_dropout(program, cfg.dropout)
        p = dropout_probabilities(program)
        # the dropout the training runs: one p (0.0 without any mask), or every mask's when they differ
        self.dropout_applied: float | list[float] = (p[0] if len(p) == 1 else p) if p else 0.0
        self.info = check_step(program)
        self.step_program = program
        self.f = Function(training_program(program))
        self.plan = cfg.plan or default_plan()
        # the run's length is known: --partition auto weighs partitioning time against the epochs
        self.options = {"plan": self.plan, "partition": cfg.partition, "seed": cfg.partition_seed,
                        "iterations": cfg.epochs + 1,
                        **({} if cfg.progress else {"progress": False}), **cfg.extra_options}
        # one process (no MPI job, no comm given) runs the same runtime on a one-rank communicator
        self.session = self.f.session(comm, **self.options)
        self.comm = self.session.comm
        self.rank = self.comm.rank
        self.data = data
        if self.rank == 0 and data is None:
            raise DsplaError("the trainer needs the data on rank 0")
        if self.rank == 0:
            for w in self.warnings:
                say_warning(w)

    # ------------------------------------------------------------------ rank 0 set-up
    def _dims(self) -> dict:
        d = self.data
        if self.sharded is not None:
            actual = {k: v.shape for k, v in self.sharded.items()}
            actual["seed"] = (1, 1)
        else:
            actual = {"A": d.adjacency.shape, "X": d.features.shape, "Y": (d.n_nodes, d.n_classes),
                      "T": (d.n_nodes, 1), "seed": (1, 1)}
        dims: dict = {}
        for n in self.f.inputs:
            name = n.attr("name")
            if name not in actual:
                continue
            for sym, size in zip(n.type.shape, actual[name]):
                if isinstance(sym, str):
                    if dims.setdefault(sym, size) != size:
                        raise DsplaError(f"dimension {sym!r} is {dims[sym]} and {size} in the data for input {name}")
                elif sym != size:
                    raise DsplaError(f"input {name} is declared {n.type} but the data is {actual[name][0]} x "
                                     f"{actual[name][1]}")
        return dims

    def _init_params(self) -> dict:
        dims = self._dims()
        rng = np.random.default_rng(self.cfg.seed)
        params = {}
        for name in self.info["params"]:
            node = next(n for n in self.f.inputs if n.attr("name") == name)
            shape = tuple(s if isinstance(s, int) else dims.get(s, self.cfg.hidden) for s in node.type.shape)
            params[name] = glorot(shape, rng)
        return params

    def _static_inputs(self) -> dict:
        if self.sharded is not None:
            return dict(self.sharded)
        d = self.data
        kinds = {n.attr("name"): n.type.kind for n in self.f.inputs}
        X = d.features
        if kinds.get("X") is Kind.dense and hasattr(X, "toarray"):
            X = X.toarray()
        elif kinds.get("X") is Kind.sparse and isinstance(X, np.ndarray):
            X = sp.csr_array(X)      # a declared-sparse X given dense features: zeros are missing entries
        return {"A": d.adjacency, "X": X, "Y": d.one_hot(), "T": d.weights(d.train_idx)}

    def _weight_decay(self) -> dict:
        names = self.info["params"]
        on = names[:1] if self.cfg.weight_decay_on == "first" else names
        return {k: self.cfg.weight_decay for k in on} if self.cfg.weight_decay else {}

    def _metrics(self, logits: np.ndarray) -> dict:
        d = self.data
        pred = logits.argmax(axis=1)
        lp = log_softmax_np(logits)
        out = {}
        for split, idx in (("train", d.train_idx), ("val", d.val_idx), ("test", d.test_idx)):
            out[f"{split}_acc"] = float((pred[idx] == d.labels[idx]).mean()) if len(idx) else float("nan")
        vi = d.val_idx
        out["val_loss"] = float(-lp[vi, d.labels[vi]].mean()) if len(vi) else float("nan")
        return out

    def _config_key(self) -> dict:
        c = self.cfg
        return {"program": str(self.step_program), "dataset": self.data.name, "nodes": self.data.n_nodes,
                "hidden": c.hidden, "optimizer": c.optimizer, "lr": c.lr, "weight_decay": c.weight_decay,
                "seed": c.seed, "dropout": c.dropout}

    # ------------------------------------------------------------------ the loop
    def fit(self) -> dict | None:
        cfg, comm, rank, session = self.cfg, self.comm, self.rank, self.session
        start, history, params, opt, static = 0, [], None, None, None

        def setup():   # rank 0: an error here (a bad checkpoint) stops every rank with one message
            static = self._static_inputs()
            params = self._init_params()
            opt = make_optimizer(cfg.optimizer, cfg.lr, self._weight_decay(),
                                 **({"momentum": cfg.momentum} if cfg.optimizer == "sgd" else {}))
            start, history = self._resume(params, opt) if cfg.resume and cfg.checkpoint else (0, [])
            return static, params, opt, start, history

        if rank == 0:
            static, params, opt, start, history = on_root(comm, setup)
        else:
            on_root(comm, setup)
        start = comm.bcast(start, 0)
        if rank == 0 and start > cfg.epochs:   # the loop below runs no epoch: say so, not just "after 25 epochs"
            self.warnings.append(f"the checkpoint is at epoch {start}, past --epochs {cfg.epochs}: nothing to "
                                 f"train (the results are the checkpoint's weights; give --epochs above {start} "
                                 "to train further)")
            say_warning(self.warnings[-1])
        elif rank == 0 and start == cfg.epochs and start and cfg.progress:
            sys.stderr.write(f"the checkpoint is at epoch {start} = --epochs {cfg.epochs}: nothing left to train\n")
        progress = Progress(cfg.epochs, cfg.progress and rank == 0, cfg.log_every)
        first_stats = last_stats = None
        stopped_early = False
        t_train = time.perf_counter()
        for epoch in range(start, cfg.epochs):
            t0 = time.perf_counter()
            inputs = self.sharded   # (sharded: every rank passes its rows)
            if rank == 0:
                # fresh parameter objects: the session re-sends an input when its object changes
                inputs = {**static, **{k: v.copy() for k, v in params.items()}}
                if self.info["uses_seed"]:
                    inputs["seed"] = np.array([[epoch_seed(cfg.seed, epoch)]], dtype=np.int64)
            got = self._gather(session.run(inputs), ["loss", "eval_logits"] + ["d" + p for p in self.info["params"]])
            stop = False
            if rank == 0:
                stats = session.last_stats
                if first_stats is None and cfg.explain:
                    progress.note(self.explain())
                elif first_stats is None and cfg.partition_notes:   # how the partition was chosen: its time, saving
                    for line in partition_lines(session.plan):
                        progress.note(line)
                first_stats = first_stats or stats
                last_stats = stats
                loss = float(got["loss"][0, 0])
                if not math.isfinite(loss):
                    raise DsplaError(f"the loss became {loss} at epoch {epoch + 1}; lower --lr")
                rec = {"epoch": epoch + 1, "loss": loss, **self._metrics(got["eval_logits"])}
                opt.step(params, {p: got["d" + p] for p in self.info["params"]})
                rec["time_s"] = time.perf_counter() - t0
                rec["step_s"] = stats.get("iteration_s_median")
                history.append(rec)
                progress.update(epoch, rec)
                stop = self._early_stop(history)
                done = epoch + 1
                if cfg.checkpoint and (done % cfg.checkpoint_every == 0 or done == cfg.epochs or stop):
                    self._save(done, params, opt, history)
            stop = comm.bcast(stop, 0)
            if stop:
                stopped_early = True
                break
        train_s = time.perf_counter() - t_train
        # the final weights: one more run for their logits (its gradients are not used)
        inputs = self.sharded
        if rank == 0:
            inputs = {**static, **{k: v.copy() for k, v in params.items()}}
            if self.info["uses_seed"]:
                inputs["seed"] = np.array([[epoch_seed(cfg.seed, cfg.epochs)]], dtype=np.int64)
        logits = self._gather(session.run(inputs), ["eval_logits"])["eval_logits"]
        if rank != 0:
            return None
        last_stats = last_stats or session.last_stats
        first_stats = first_stats or session.last_stats
        final = self._metrics(logits)
        progress.close(f"stopped early after epoch {len(history)} (validation loss rose)" if stopped_early else None)
        return self._result(history, final, logits, params, first_stats, last_stats, train_s, stopped_early)

    @staticmethod
    def _gather(out: dict, names: list) -> dict:
        """The outputs the optimizer and the metrics need, whole on rank 0 (collectives: every
        rank calls this; missing gradient entries are zeros)."""
        return {k: out[k].to_numpy(fill=0.0, root=0) for k in names}

    def explain(self) -> str:
        """The distributed plan of the training program (rank 0, after the first step)."""
        return self.session.explain()

    def _early_stop(self, history) -> bool:
        N = self.cfg.early_stopping
        if not N or len(history) <= N:
            return False
        vl = [h["val_loss"] for h in history]
        return vl[-1] > float(np.mean(vl[-(N + 1):-1]))

    def _save(self, done, params, opt, history):
        arrays = {f"param.{k}": v for k, v in params.items()}
        arrays.update({f"opt.{k}": np.asarray(v) for k, v in opt.state().items()})
        ckpt.save(self.cfg.checkpoint, {"epoch": done, "history": history, "config": self._config_key(),
                                        "optimizer": opt.name}, arrays)

    def _resume(self, params, opt):
        got = ckpt.load(self.cfg.checkpoint)
        if got is None:   # --resume on a fresh directory is fine, but not silently
            if self.cfg.progress:
                sys.stderr.write(f"no checkpoint in {self.cfg.checkpoint}: starting from epoch 0\n")
            return 0, []
        meta, arrays = got
        want = self._config_key()
        diff = [k for k in want if meta.get("config", {}).get(k) != want[k]]
        if diff:
            raise DsplaError(f"the checkpoint in {self.cfg.checkpoint} is from a different run (differs in "
                             f"{', '.join(diff)}); remove it or use another --checkpoint directory")
        for k in params:
            a = arrays.get(f"param.{k}")
            if a is None or a.shape != params[k].shape:
                raise DsplaError(f"the checkpoint in {self.cfg.checkpoint} has no parameter {k} of shape "
                                 f"{params[k].shape}")
            params[k][...] = a
        opt.load_state({k[4:]: v for k, v in arrays.items() if k.startswith("opt.")})
        if self.cfg.progress:
            sys.stderr.write(f"resuming from {self.cfg.checkpoint} after epoch {meta['epoch']}\n")
        self.resumed_from = int(meta["epoch"])
        return int(meta["epoch"]), list(meta["history"])

    def _result(self, history, final, logits, params, first_stats, stats, train_s, stopped_early) -> dict:
        times = [h["time_s"] for h in history]
        comm_keys = ("words_sent_total", "words_sent_avg", "words_sent_max", "messages_sent_total",
                     "messages_sent_avg", "messages_sent_max")
        # words per step are the last epoch's; planning and the first iteration happened in the
        # first run only (later runs report 0.0 for them), so those two come from its stats
        per_rank = [dict(r) for r in stats.get("per_rank") or []]
        for r, first in zip(per_rank, first_stats.get("per_rank") or []):
            r["planning_s"], r["first_iteration_s"] = first["planning_s"], first["first_iteration_s"]
        trained = len(history) - (self.resumed_from or 0)
        return {
            "dataset": self.data.summary(),
            "config": {**self.cfg.public(), "plan": self.plan},
            "P": stats.get("P", 1),
            "plan": stats.get("plan"),
            "requested_plan": self.plan,
            "partition": stats.get("partition"),
            "epochs": history,
            "epochs_run": len(history),
            "epochs_trained": trained,                 # by this run (epochs_run includes a checkpoint's)
            "resumed_from_epoch": self.resumed_from,   # None: not resumed
            "dropout_applied": self.dropout_applied,
            "warnings": list(self.warnings),
            "stopped_early": stopped_early,
            "train_accuracy": final["train_acc"],
            "val_accuracy": final["val_acc"],
            "test_accuracy": final["test_acc"],
            "val_loss": final["val_loss"],
            "final_loss": history[-1]["loss"] if history else None,
            "epoch_time_s_median": float(np.median(times)) if times else None,
            "train_time_s": train_s,
            "planning_s": first_stats.get("planning_s"),
            "comm": {k: stats.get(k) for k in comm_keys},
            "comm_per_rank": per_rank,
            "products": [{k: p.get(k) for k in ("expr", "plan", "K", "words_sent_total", "words_sent_avg",
                                                "words_sent_max", "messages_sent_total", "messages_sent_avg",
                                                "messages_sent_max", "why")} for p in stats.get("products", [])],
            "logits": logits,       # not written to JSON (see cli/train.py --save-logits)
            "params": params,
        }
