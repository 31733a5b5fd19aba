"""The machine's cost-model coefficients: where they come from and where they are kept.

alpha: seconds per message or collective step (latency); beta: seconds per word moved, kept
separately for point-to-point, collectives, one-sided gets and packing; gamma: seconds per
nonzero x K of local SpMM; kappa: seconds per local product call / per message handled
(Python and library overheads). ``dspla calibrate`` fits them on this machine and stores them
in the user cache; the package ships a default calibration so a first run needs none.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, fields

from ..formats.files import atomic_write

FIELDS_DOC = {
    "alpha_p2p": "s per point-to-point message", "beta_p2p": "s per word sent or received point-to-point",
    "alpha_coll": "s per collective step (x log2 of the group size)", "beta_coll": "s per word received in "
    "a collective", "alpha_get": "s per one-sided get", "beta_get": "s per word fetched one-sided",
    "beta_pack": "s per word packed into or out of a message buffer (and per entry a local element-wise "
    "step touches)", "gamma": "s per nonzero x K of local SpMM",
    "delta": "s per output entry (rows holding entries x K) of a local SpMM",
    "beta_fill": "s per entry of an output created full at the monoid's identity (for in-place accumulation)",
    "kappa": "s per local product call or per message handled (overheads)",
    "kappa_instr": "s per plan instruction interpreted (Python dispatch, bookkeeping)",
}


@dataclass(frozen=True)
class Coefficients:
    alpha_p2p: float = 2.0e-5
    beta_p2p: float = 1.0e-9
    alpha_coll: float = 3.0e-5
    beta_coll: float = 1.0e-9
    alpha_get: float = 3.0e-5
    beta_get: float = 2.0e-9
    beta_pack: float = 1.0e-9
    gamma: float = 2.0e-9
    delta: float = 1.0e-9
    beta_fill: float = 5.0e-10
    kappa: float = 3.0e-5
    kappa_instr: float = 5.0e-6
    cores: int = 0                 # cores of the one machine calibrated on (0: unknown / a cluster)
    source: str = "built-in guess"
    P: int = 0
    # (plan, factor) pairs: what a plan's implementation costs beyond its counts on this machine
    # (assembling whole operands, its buffers' first touch, its products' memory locality), a
    # factor on its predicted time fitted by the end-to-end refit; 1 for a plan it did not run
    plan_factors: tuple = ()

    def factor(self, plan: str) -> float:
        for name, f in self.plan_factors:
            if name == plan:
                return f
        return 1.0

    def as_dict(self) -> dict:
        return asdict(self)

    def twoface(self, K: int | None = None) -> dict:
        """The same coefficients under the Two-Face thesis's names (eqs. 4.1-4.3): sync = collectives,
        async = one-sided gets, gamma_A/kappa_A = local compute per nonzero x K / per stripe."""
        return {"beta_S": self.beta_coll, "alpha_S": self.alpha_coll, "beta_A": self.beta_get,
                "alpha_A": self.alpha_get, "gamma_A": self.gamma, "kappa_A": self.kappa}

    @classmethod
    def from_dict(cls, d: dict) -> "Coefficients":
        names = {f.name for f in fields(cls)}
        got = {k: v for k, v in d.items() if k in names}
        factors = got.get("plan_factors") or {}
        got["plan_factors"] = tuple(sorted((str(k), float(v)) for k, v in
                                           (factors.items() if isinstance(factors, dict) else factors)))
        return cls(**got)


def cache_dir() -> str:
    base = os.environ.get("DSPLA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "dspla")
    return base


def user_path(P: int | None = None) -> str:
    return os.path.join(cache_dir(), f"calibration-P{P}.json" if P else "calibration.json")


def shipped() -> Coefficients:
    with open(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "calibration_default.json"),
              encoding="utf-8") as fh:   # (a path, not importlib.resources: its readers load zipfile)
        text = fh.read()
    d = json.loads(text)
    # (the file's "machine" says where it was fitted, for whoever refits it; a user reads only this)
    return Coefficients.from_dict({**d["coefficients"], "source": "the shipped default, fitted on another machine "
                                                                  "(dspla calibrate fits this one)"})


_loaded: dict = {}


def _read(path: str) -> Coefficients:
    with open(path) as f:
        d = json.load(f)
    return Coefficients.from_dict({**d["coefficients"], "source": path})


def calibrations() -> dict[int, str]:
    """This user's calibrations: P -> file, in the cache folder (``cache_dir()``)."""
    found = {}
    d = cache_dir()
    if os.path.isdir(d):
        for name in os.listdir(d):
            if name.startswith("calibration-P") and name.endswith(".json"):
                try:
                    found[int(name[len("calibration-P"):-5])] = os.path.join(d, name)
                except ValueError:
                    pass
    return found


def in_use(P: int | None = None) -> tuple[str | None, str]:
    """(the file the cost model reads for P processes, None for the shipped default; why that one):
    $DSPLA_CALIBRATION if set; else this user's calibration for P (or for the nearest P
    calibrated); else the shipped default."""
    path = os.environ.get("DSPLA_CALIBRATION")
    if path:
        return path, "$DSPLA_CALIBRATION names it"
    found = calibrations()
    if not found:
        return None, f"no calibration in {cache_dir()}"
    best = min(found, key=lambda q: (abs(q - (P or 2)), q))
    return found[best], ("this user's calibration for P = " + str(best)
                         + ("" if best == (P or 2) else f", the nearest to P = {P or 2} calibrated"))


def load(P: int | None = None, path: str | None = None) -> Coefficients:
    """$DSPLA_CALIBRATION if set; else this user's calibration for P processes (or the nearest P
    calibrated); else the shipped default (``in_use`` says which)."""
    path = path or os.environ.get("DSPLA_CALIBRATION")
    if path:
        return _read(path)
    if P in _loaded:
        return _loaded[P]
    found, _ = in_use(P)
    c = _read(found) if found else shipped()
    _loaded[P] = c
    return c


def save(coefs: Coefficients, fits: dict, path: str | None = None) -> str:
    path = path or user_path(coefs.P or None)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_write(path, "w") as f:
        json.dump({"coefficients": {k: (dict(v) if k == "plan_factors" else v) for k, v in coefs.as_dict().items()
                                    if k != "source"}, "fits": fits,
                   "made": time.strftime("%Y-%m-%d %H:%M")}, f, indent=1)
    _loaded.clear()
    return path
