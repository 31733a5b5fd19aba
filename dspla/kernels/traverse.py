"""A traversal's compiled code, all in this file: numba's cache of a compiled function is
invalidated by changes to its own file only, and the loop below has the others compiled into it.

- ``rule`` and ``wants_edges``: the one-process push / pull rule (kernels/spmspv.py describes
  it), on plain values; spmspv's Python path calls them as they are, the loop compiled.
- ``_write`` and ``_settle_into``: kernels/levels.py's level writer, which stamps a pulled level
  (``_stamp``) and writes the stamped levels' values when the loop ends (``_settle``).
- ``_loop`` (``compiled().loop``): runtime/interp/fused.py's traversal as one compiled loop,
  numba calling SuiteSparse at the functions' addresses. Each level is what the Python loop does,
  in the same order and with the same arguments: the frontier's count, the rule (with the
  frontier's edges where it reads them), the product (``spmspv.product``'s storage settings, mask
  and descriptors) and the depth written (stamped on a pulled level, the typed apply on a pushed
  one); the stamps settled at the end, as ``LevelWriter.finish`` settles them.

Between those C calls the Python loop spent 5-7 us a level, and more around them: a breadth-first
search's call, with the trims around it, took 17 % less on email-Enron (nine levels) and 14 % less
on soc-Slashdot0902. It is used where the levels are stamped (graphs of ``levels.MIN_NODES`` nodes
or more, where numba is in use anyway). Compiled once per installation and cached (about 1.3 s;
loading it is part of numba's first use in a process): the functions' addresses are arguments, so
the cached code holds none. A failing call ends the loop at once and is reported by name, as the
Python loop's check reports it; so does a checked int64 depth that would wrap.
"""
from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np
from suitesparse_graphblas import ffi, lib

ALPHA_EDGES, BETA1, BETA2 = 8, 8, 512   # the rule's constants: LAGraph's
# the calls in the loop's table, by position (a failure names its call)
NAMES = ("Matrix_nvals", "mxm", "Matrix_Option_set", "Matrix_Option_get", "extractElement", "unpack_BitmapC",
         "pack_BitmapC", "apply")
OVERFLOW = -1   # the loop's code for a checked depth that would leave int64
_MAX, _MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min
_NO_VALUE = lib.GrB_NO_VALUE
_CONTROL, _STATUS = lib.GxB_SPARSITY_CONTROL, lib.GxB_SPARSITY_STATUS
_BITMAP, _SPARSE = lib.GxB_BITMAP, lib.GxB_SPARSE | lib.GxB_HYPERSPARSE


@functools.cache
def calls(kind: str) -> np.ndarray:
    """The addresses of the loop's C functions (in NAMES' order) for depths of python-graphblas
    dtype ``kind`` (INT64 or FP64: the apply's scalar)."""
    names = ("GrB_Matrix_nvals", "GrB_mxm", "GxB_Matrix_Option_set_INT32", "GxB_Matrix_Option_get_INT32",
             "GrB_Matrix_extractElement_UINT64", "GxB_Matrix_unpack_BitmapC", "GxB_Matrix_pack_BitmapC",
             f"GrB_Matrix_apply_BinaryOp2nd_{kind}")
    return np.array([address(ffi.addressof(lib, name)) for name in names], np.uint64)


def address(x) -> int:
    """A C pointer's address (a cffi pointer: a matrix's ``gb_obj[0]``, an operator's ``gb_obj``)."""
    return int(ffi.cast("uintptr_t", x))


_NVALS, _MXM, _SET, _GET, _EXTRACT, _UNPACK, _PACK, _APPLY = range(8)


# bound by ``compiled``: numba's twins of the functions below, two pointer casts, a C call at an
# address and numba.carray
rule_c = wants_edges_c = stamp_c = settle_c = write_c = settle_into_c = unpack_c = pack_c = None
bytes_c = words_c = carray = ccall = None


def _jit(fn):
    """numba.njit, cached where numba finds a writable place."""
    import numba
    try:
        return numba.njit(cache=True, nogil=True, boundscheck=False)(fn)
    except RuntimeError:   # (no writable place for numba's cache: a read-only install, no home)
        return numba.njit(cache=False, nogil=True, boundscheck=False)(fn)


def _pointer(dtype):
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def at(typingctx, address):   # (an address as a typed pointer, for numba.carray)
        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(signature.return_type))
        return types.CPointer(dtype)(types.uint64), codegen
    return at


def _caller():
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def call(typingctx, address, args):   # (the C function at an address, on a tuple of its arguments)
        def codegen(context, builder, signature, llargs):
            tys = signature.args[1]
            values = [builder.extract_value(llargs[1], i) for i in range(len(tys))]
            fn = ir.FunctionType(ir.IntType(32), [context.get_value_type(t) for t in tys])
            return builder.call(builder.inttoptr(llargs[0], fn.as_pointer()), values)
        return types.int32(address, args), codegen
    return call


@functools.cache
def compiled() -> SimpleNamespace | None:
    """The kernels compiled (``write`` and ``settle_into``: kernels/levels.py's level writer; the
    ``settle`` pass; ``loop``), or None when numba's compiler is
    switched off (NUMBA_DISABLE_JIT): they would run as Python loops over every node. numba is
    loaded here only (a run that traverses nothing large never loads it). The compiled functions
    call each other by the names ending in ``_c``: numba looks a callee up in the module's globals
    when it compiles its caller, so they are bound there first."""
    import numba
    from numba import types
    if numba.config.DISABLE_JIT:
        return None
    names = globals()
    names["bytes_c"], names["words_c"], names["carray"] = _pointer(types.uint8), _pointer(types.int64), numba.carray
    names["ccall"] = _caller()
    for name in ("rule", "wants_edges", "_stamp", "_settle", "_write", "_settle_into", "_unpack", "_pack"):
        names[name.lstrip("_") + "_c"] = _jit(names[name])
    return SimpleNamespace(write=names["write_c"], settle_into=names["settle_into_c"], settle=names["settle_c"],
                           loop=_jit(_loop))


def rule(pushing: bool, any_pull: bool, last: int, unexplored: int, n: int, nq: int, edges: int):
    """(pushing, any pulled, edges not yet explored) after a frontier of nq nodes, the last of
    ``last`` (kernels/spmspv.py's rule); ``edges``, the frontier's, is read only where
    ``wants_edges``."""
    growing, shrinking = nq > last, nq < last
    if pushing:
        if unexplored < n:
            pass   # little of the graph is left: push to the end
        elif any_pull:
            pushing = not (growing and nq * BETA1 > n)
        else:
            unexplored -= edges
            pushing = not (growing and edges * ALPHA_EDGES > unexplored)
    elif shrinking and nq * BETA2 <= n:
        pushing = True
    return pushing, any_pull or not pushing, unexplored


def wants_edges(pushing: bool, any_pull: bool, unexplored: int, n: int) -> bool:
    """Whether ``rule`` reads the frontier's edges at this level (a C call: made only then)."""
    return pushing and unexplored >= n and not any_pull


def _stamp(stamp, cb, qb, level):
    """A pulled level's nodes (qb) marked present in C (cb) and stamped with its number."""
    for i in range(qb.shape[0]):
        b = qb[i]
        stamp[i] |= b * level
        cb[i] |= b


def _settle(cx, stamp, table, levels):
    """cx's stamped slots set to their level's value (``table[1..levels]``, as 64-bit words), the
    stamps cleared. A select, not a branch (the stamped slots fall at random); where the values
    are evenly spaced words (a depth counted up by a whole step), each is computed from its stamp
    instead of read from the table: the pass then vectorizes (on email-Enron 47 -> 30 us)."""
    step = table[2] - table[1] if levels >= 2 else 0
    even = True
    for j in range(2, levels + 1):
        even = even and table[j] == table[1] + (j - 1) * step
    if even:
        base = table[1] - step
        for i in range(stamp.shape[0]):
            s = np.int64(stamp[i])
            keep = np.int64(s == 0) - 1   # (all ones where stamped)
            cx[i] = (cx[i] & ~keep) | ((base + s * step) & keep)
            stamp[i] = 0
        return
    for i in range(stamp.shape[0]):
        s = stamp[i]
        v = table[s]
        cx[i] = v if s != 0 else cx[i]
        stamp[i] = 0


# cells (int64): 0 a count, 1 the frontier's edges, 2 a storage status, from _SEEN and from _FRONT a
# matrix's unpacked arrays (b, x, their sizes, iso, nvals); objs: the static matrices' and operators'
# addresses
_A, _P, _DEG, _E, _SR, _PF, _SECOND = range(7)
_SEEN, _FRONT = 3, 9
_NIL = np.uint64(0)


def _loop(calls, objs, desc, cells, stamp, values, typed, n, max_iter, q, first, seen, depth, k, checked,
          last, pushing, any_pull, unexplored, stamped):
    """From frontier q (the first level into ``first``, the next ones into q), with the rule's state
    (last, pushing, any pulled, unexplored) and the writer's stamped levels -> (code, the failing
    call's position (NAMES), levels, depth, the rule's state, stamped levels, pulled levels, the
    last count). Scalars in and out: numpy's would cost more than they carry."""
    cp = np.uint64(cells.ctypes.data)
    pulls, it, code, where = 0, 0, 0, 0
    while True:
        code = ccall(calls[_NVALS], (cp, q))
        if code != 0:
            break
        nq = cells[0]
        if nq == 0 or it == max_iter:
            break
        edges = 0
        if wants_edges_c(pushing, any_pull, unexplored, n):
            code, where = ccall(calls[_MXM], (objs[_E], _NIL, _NIL, objs[_PF], objs[_DEG], q, desc[4])), _MXM
            if code == 0:
                code, where = ccall(calls[_EXTRACT], (cp + 8, objs[_E], _NIL, _NIL)), _EXTRACT
                edges = cells[1] if code == 0 else 0
                code = 0 if code == _NO_VALUE else code
            if code != 0:
                break
        pushing, any_pull, unexplored = rule_c(pushing, any_pull, last, unexplored, n, nq, edges)
        last, pull = nq, not pushing
        pulls += pull
        sparsity = np.int32(_BITMAP if pull else _SPARSE)
        code, where = ccall(calls[_SET], (q, np.int32(_CONTROL), sparsity)), _SET
        if code == 0 and it == 0:   # (the first level into a new matrix, the next ones into q)
            code = ccall(calls[_SET], (first, np.int32(_CONTROL), sparsity))
        if code == 0:
            target = first if it == 0 else q
            code, where = ccall(calls[_MXM], (target, seen, _NIL, objs[_SR], objs[_A] if pull else objs[_P], q,
                                              desc[2 * pull + (it != 0)])), _MXM
            q = target
        if code != 0:
            break
        # (tested before the sum: LLVM may take a signed sum that wrapped for one that did not)
        if checked and ((k > 0 and depth > _MAX - k) or (k < 0 and depth < _MIN - k)):
            code = OVERFLOW
            break
        depth = depth + k
        code, where, stamped = write_c(calls, cells, q, seen, objs[_SECOND], stamp, values, typed, n, stamped, depth)
        if code != 0:
            break
        it += 1
    nq = cells[0]
    if stamped:   # (the stamped levels' values, as LevelWriter.finish writes them; also after a failure)
        settled, at = settle_into_c(calls, seen, cells, stamp, values, stamped, n)
        if settled == 0:
            stamped = 0
        elif code == 0:
            code, where = settled, at
    return code, where, it, depth, last, pushing, any_pull, unexplored, stamped, pulls, nq


def _write(calls, cells, q, seen, second, stamp, values, typed, n, stamped, depth):
    """seen<q's structure> = depth (q and seen addresses, SECOND's at ``second``): a bitmap q is
    stamped, any other written by the typed apply -> (code, its call's position, stamped levels)."""
    cells[2] = 0
    code = ccall(calls[_GET], (q, np.int32(_STATUS), np.uint64(cells.ctypes.data) + 16))
    if code != 0:
        return code, _GET, stamped
    if (cells[2] & 0xFFFFFFFF) == _BITMAP:
        if stamped == 255:   # (a level number fits a byte: the stamps settled, counting again)
            code, at = settle_into_c(calls, seen, cells, stamp, values, stamped, n)
            if code != 0:
                return code, at, stamped
            stamped = 0
        code = unpack_c(calls, seen, cells, _SEEN)
        if code != 0:
            return code, _UNPACK, stamped
        if cells[_SEEN + 4] & 0xFF:   # (one value for all: put back, GraphBLAS expands it)
            code = pack_c(calls, seen, cells, _SEEN, cells[_SEEN + 5])
            if code != 0:
                return code, _PACK, stamped
        else:
            code = unpack_c(calls, q, cells, _FRONT)
            if code != 0:
                pack_c(calls, seen, cells, _SEEN, cells[_SEEN + 5])   # (as it was)
                return code, _UNPACK, stamped
            stamped += 1
            typed[stamped] = depth
            stamp_c(stamp, carray(bytes_c(np.uint64(cells[_SEEN])), n), carray(bytes_c(np.uint64(cells[_FRONT])), n),
                    np.uint8(stamped))
            added = cells[_FRONT + 5]
            code = pack_c(calls, q, cells, _FRONT, added)
            code2 = pack_c(calls, seen, cells, _SEEN, cells[_SEEN + 5] + added)
            return (code if code != 0 else code2), _PACK, stamped
    return ccall(calls[_APPLY], (seen, _NIL, second, second, q, depth, _NIL)), _APPLY, stamped


def _settle_into(calls, seen, cells, stamp, values, levels, n):
    """The stamped levels' values written into seen (``_settle``) -> (code, its call's position)."""
    code = unpack_c(calls, seen, cells, _SEEN)
    if code != 0:
        return code, _UNPACK
    settle_c(carray(words_c(np.uint64(cells[_SEEN + 1])), n), stamp, values, levels)
    return pack_c(calls, seen, cells, _SEEN, cells[_SEEN + 5]), _PACK


def _unpack(calls, M, cells, first):
    """M's bitmap arrays into cells[first:first + 6] (b, x, their sizes, iso, nvals)."""
    at = np.uint64(cells.ctypes.data) + np.uint64(8 * first)
    return ccall(calls[_UNPACK], (M, at, at + 8, at + 16, at + 24, at + 32, at + 40, _NIL))


def _pack(calls, M, cells, first, nvals):
    """M given back its arrays from cells[first:], holding nvals."""
    at = np.uint64(cells.ctypes.data) + np.uint64(8 * first)
    return ccall(calls[_PACK], (M, at, at + 8, np.uint64(cells[first + 2]), np.uint64(cells[first + 3]),
                                np.uint8((cells[first + 4] & 0xFF) != 0), np.uint64(nvals), _NIL))


__all__ = ["NAMES", "OVERFLOW", "address", "calls", "compiled", "rule", "wants_edges"]
