"""Handlers of one-sided access: a rank's rows exposed in a window, and gets of other ranks' rows."""
from __future__ import annotations

import time

from ...instr import Get, WinExpose
from ...ir.types import DType
from ...kernels import buffers as local
from .interpreter import Runtime, handler
from .messages import _Posted


@handler(WinExpose)
def _win_expose(rt: Runtime, i: WinExpose):
    w = rt.windows[i.win]
    p = rt.parity[i.win] = 1 - rt.parity[i.win]
    t0 = time.perf_counter()
    if i.nrows and i.k:
        local.write_window_rows(w.buf[p * i.nrows:(p + 1) * i.nrows], rt.slots[i.src], DType(i.dtype), i.presence)
    rt.timed("pack_s", t0)
    t0 = time.perf_counter()
    w.expose()
    rt.timed("wait_s", t0)


@handler(Get)
def _get(rt: Runtime, i: Get):
    w = rt.windows[i.win]
    buf = local.window_recv_buffer(i.nrows, i.k, DType(i.dtype), i.presence)
    parity = rt.parity[i.win]
    pattern = rt.patterns.get((id(i), parity))
    if pattern is None:   # each get's rows in each half of the double-buffered window, built once
        pattern = rt.patterns[id(i), parity] = w.pattern(i.starts + parity * i.target_nrows, i.counts)
    t0 = time.perf_counter()
    req = w.get(buf, i.target, pattern)
    rt.timed("wait_s", t0)
    rt.slots[i.out] = _Posted(req, buf, i)
