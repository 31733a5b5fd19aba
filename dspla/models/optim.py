"""Optimizers for the trainer, in numpy on rank 0 (the parameters are small and replicated: every
step sends the updated W to the processes with the next step's inputs).

Both follow PyTorch's definitions, so a dspla run and a PyTorch Geometric run with the same
settings take the same steps:

- ``SGD``: g = grad + wd * w; with momentum b: v = b v + g, w -= lr * v (b = 0: w -= lr * g);
- ``Adam`` (Kingma & Ba): g = grad + wd * w; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
  w -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).

Weight decay is the L2 term (wd / 2) ||w||^2 of the loss, added to the gradient, per parameter:
``weight_decay`` maps parameter names to their wd (Kipf & Welling decay only the first layer).
"""
from __future__ import annotations

import numpy as np

from ..errors import UnknownNameError


class Optimizer:
    name = "?"

    def __init__(self, lr: float, weight_decay: dict | None = None):
        if not lr > 0:
            raise ValueError(f"the learning rate must be positive, got {lr}")
        self.lr = float(lr)
        self.weight_decay = dict(weight_decay or {})
        self.t = 0

    def _grad(self, name, w, g):
        wd = self.weight_decay.get(name, 0.0)
        return g + wd * w if wd else g

    def step(self, params: dict, grads: dict) -> None:
        """Update ``params`` (name -> float64 array) in place."""
        self.t += 1
        for name, w in params.items():
            g = np.asarray(grads[name], dtype=w.dtype)
            if g.shape != w.shape:
                raise ValueError(f"gradient of {name} has shape {g.shape}, the parameter {w.shape}")
            self._update(name, w, self._grad(name, w, g))

    # checkpoints: plain arrays and numbers only
    def state(self) -> dict:
        return {"t": self.t}

    def load_state(self, state: dict) -> None:
        self.t = int(state["t"])


class SGD(Optimizer):
    name = "sgd"

    def __init__(self, lr: float, weight_decay=None, momentum: float = 0.0):
        super().__init__(lr, weight_decay)
        self.momentum = float(momentum)
        self.v: dict = {}

    def _update(self, name, w, g):
        if self.momentum:
            v = self.v.get(name)
            v = g.copy() if v is None else self.momentum * v + g
            self.v[name] = v
            g = v
        w -= self.lr * g

    def state(self):
        return {"t": self.t, **{f"v.{k}": v for k, v in self.v.items()}}

    def load_state(self, state):
        super().load_state(state)
        self.v = {k[2:]: np.array(v) for k, v in state.items() if k.startswith("v.")}


class Adam(Optimizer):
    name = "adam"

    def __init__(self, lr: float, weight_decay=None, betas=(0.9, 0.999), eps: float = 1e-8):
        super().__init__(lr, weight_decay)
        self.b1, self.b2 = map(float, betas)
        self.eps = float(eps)
        self.m: dict = {}
        self.v: dict = {}

    def _update(self, name, w, g):
        m = self.m.setdefault(name, np.zeros_like(w))
        v = self.v.setdefault(name, np.zeros_like(w))
        m *= self.b1
        m += (1 - self.b1) * g
        v *= self.b2
        v += (1 - self.b2) * g * g
        mhat = m / (1 - self.b1 ** self.t)
        vhat = v / (1 - self.b2 ** self.t)
        w -= self.lr * mhat / (np.sqrt(vhat) + self.eps)

    def state(self):
        return {"t": self.t, **{f"m.{k}": v for k, v in self.m.items()}, **{f"v.{k}": v for k, v in self.v.items()}}

    def load_state(self, state):
        super().load_state(state)
        self.m = {k[2:]: np.array(v) for k, v in state.items() if k.startswith("m.")}
        self.v = {k[2:]: np.array(v) for k, v in state.items() if k.startswith("v.")}


OPTIMIZERS = {"adam": Adam, "sgd": SGD}


def make_optimizer(name: str, lr: float, weight_decay: dict | None = None, **kw) -> Optimizer:
    if name not in OPTIMIZERS:
        raise UnknownNameError("optimizer", name, list(OPTIMIZERS))
    return OPTIMIZERS[name](lr, weight_decay, **kw)
