"""Central finite differences (float64) of a dspla loss, entry by entry of each parameter's present
entries: the oracle the generated gradients are compared with. Inputs are built from a seeded
spec: sparse values have missing entries and an empty first row."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

import dspla as dp
from dspla.ir import Program
from dspla.ops.define import node_of


def spec(role, kind, shape, values="signed", density=0.5):
    return {"role": role, "kind": kind, "shape": shape, "values": values, "density": density}


def P(kind, shape, values="signed", density=0.5):
    return spec("param", kind, shape, values, density)


def I(kind, shape, values="signed", density=0.5):   # noqa: E743
    return spec("input", kind, shape, values, density)


def _values(rng, k, how):
    mag = rng.uniform(0.5, 1.5, k) if how == "pos" else rng.uniform(0.2, 1.2, k)
    return mag if how == "pos" else mag * rng.choice([-1.0, 1.0], k)


def make_data(specs: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for name, s in specs.items():
        r, c = s["shape"]
        if s["kind"] == "seed":
            out[name] = np.array([[int(rng.integers(1, 1 << 30))]])
            continue
        if s["kind"] == "dense":
            out[name] = _values(rng, r * c, s["values"]).reshape(r, c)
            continue
        keep = rng.random((r, c)) < s["density"]
        if r > 2:
            keep[0] = False                      # an empty row
        if not keep.any():
            keep[-1, -1] = True
        rows, cols = np.nonzero(keep)
        out[name] = sp.csr_array((_values(rng, rows.size, s["values"]), (rows, cols)), shape=(r, c))
    return out


def declare(specs: dict) -> dict:
    ex = {}
    for name, s in specs.items():
        if s["kind"] == "seed":
            ex[name] = dp.dense(name, (1, 1), "int64")
        elif s["role"] == "param":
            ex[name] = dp.param(name, s["shape"], kind=s["kind"])
        else:
            ex[name] = dp.declare(name, s["kind"], s["shape"])
    return ex


def inputs_read(x) -> set:
    """The names of the inputs a value is computed from."""
    return {n.attr("name") for n in Program((("x", node_of(x)),)).inputs}


def gradients(build, specs: dict, seed: int = 0) -> tuple:
    """(a function of loss = Σ out * R (R a fixed random weight of out's shape) and of dp.grad for
    each parameter it reads, named d<param>; one of the loss alone; the data it takes; those
    parameters)."""
    ex = declare(specs)
    out = build(**ex)
    loss = dp.reduce_all(out * dp.dense("R_", out.shape))
    read = inputs_read(loss)   # (a generated program may leave some declared value unread)
    params = [k for k, s in specs.items() if s["role"] == "param" and k in read]
    grads = dp.grad(loss, [ex[k] for k in params])
    data = {k: v for k, v in make_data(specs, seed).items() if k in read}
    data["R_"] = np.random.default_rng(seed + 1).uniform(0.5, 1.5, out.shape)
    return (dp.function({"loss": loss, **{"d" + k: g for k, g in zip(params, grads)}}), dp.function({"loss": loss}),
            data, params)


def check(build, specs: dict, seed: int = 0, eps: float = 1e-6, rtol: float = 1e-6, atol: float = 1e-8):
    """Compare dp.grad of loss = Σ out * R (``gradients``) with central differences, for every
    parameter in ``specs``; also that each gradient is present exactly where its parameter is."""
    f, floss, data, params = gradients(build, specs, seed)
    got = f(**data)
    assert got["loss"].nvals == 1, "the case's loss has no value"

    def L(d):
        v = floss(**d)["loss"]
        return v.to_numpy()[0, 0]

    for k in params:
        g = got["d" + k]
        W = data[k]
        if sp.issparse(W):
            coo = sp.coo_array(W)
            want_present = np.zeros(W.shape, bool)
            want_present[coo.row, coo.col] = True
        else:
            want_present = np.ones(W.shape, bool)
        assert np.array_equal(g.present(), want_present), f"d{k}: not present exactly where {k} is"
        num = np.zeros(W.shape)
        for idx in zip(*np.nonzero(want_present)):
            vals = []
            for sgn in (1, -1):
                if sp.issparse(W):
                    Wp = sp.lil_array(W)
                    Wp[idx] = W[idx] + sgn * eps
                    Wp = sp.csr_array(Wp)
                else:
                    Wp = W.copy()
                    Wp[idx] += sgn * eps
                vals.append(L({**data, k: Wp}))
            num[idx] = (vals[0] - vals[1]) / (2 * eps)
        np.testing.assert_allclose(g.to_numpy(fill=0.0), num, rtol=rtol, atol=atol, err_msg=f"d{k}")
    return got
