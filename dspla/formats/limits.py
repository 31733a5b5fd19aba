"""Limits on what reading a file (or evaluating ``eye(n)``) may allocate, checked before the
allocation (docs/user-guide.md, "Limits"):

- no input may need more than ``DSPLA_MAX_INPUT_BYTES`` (default: the memory the system has
  available when the file is read, MemAvailable);
- a sparse input may have at most ``max(2**16, DSPLA_MAX_DIM_PER_ENTRY x entries)`` rows and
  columns (default 16 per entry): every row costs memory on every process that plans or
  partitions it (row pointers, owners, send lists: about 150 bytes a row in all) whether it holds
  entries or not, so a small file declaring a huge shape (a mistyped MatrixMarket size line, a
  lying .npz) would cost gigabytes; what is allowed costs at most about 10 MB beyond the entries;
- a count a file declares (entries, array elements) must fit in the bytes it actually has.

Sizes in the variables may be plain bytes or carry a suffix: 512M, 8G, 1T (powers of 1024).
"""
from __future__ import annotations

import os

from ..errors import DataFormatError, DsplaError

INT64_MAX = 2**63 - 1
DIM_FLOOR = 2**16            # rows/columns always allowed, whatever the entries (about 10 MB in all)
_SUFFIX = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_size(text: str, var: str) -> int:
    t = text.strip().upper().rstrip("B")
    mult = _SUFFIX.get(t[-1:], 1)
    num = t[:-1] if t[-1:] in _SUFFIX else t
    try:
        value = int(float(num) * mult)
    except ValueError:
        raise DsplaError(f"${var} must be a size such as 8G or 500000000, got {text!r}") from None
    if value <= 0:
        raise DsplaError(f"${var} must be positive, got {text!r}")
    return value


def available_memory() -> int:
    """Bytes the system can give this process now (MemAvailable; total memory elsewhere)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def max_input_bytes() -> tuple[int, str]:
    """(the limit, how to raise it or where it comes from)."""
    env = os.environ.get("DSPLA_MAX_INPUT_BYTES")
    if env:
        return parse_size(env, "DSPLA_MAX_INPUT_BYTES"), "DSPLA_MAX_INPUT_BYTES"
    return available_memory(), "the memory available now; set DSPLA_MAX_INPUT_BYTES to change the limit"


def max_dim_per_entry() -> int:
    env = os.environ.get("DSPLA_MAX_DIM_PER_ENTRY")
    if not env:
        return 16
    try:
        v = int(env)
    except ValueError:
        raise DsplaError(f"$DSPLA_MAX_DIM_PER_ENTRY must be an integer, got {env!r}") from None
    return max(1, v)


def human(n: float) -> str:
    units = ("bytes", "KB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB")
    for unit in units:
        if abs(n) < 1024 or unit == units[-1]:
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} YB"


def check_bytes(path, need: int, what: str, line: int | None = None) -> None:
    """Refuse (DataFormatError naming ``path``) an allocation of ``need`` bytes over the limit."""
    limit, source = max_input_bytes()
    if need > limit:
        raise DataFormatError(path, f"{what} needs {human(need)}, more than the {human(limit)} allowed "
                              f"({source})", line=line)


def check_memory(need: int, what: str) -> None:
    """Refuse (DsplaError) an allocation of ``need`` bytes for ``what`` over the limit."""
    limit, source = max_input_bytes()
    if need > limit:
        raise DsplaError(f"{what} needs {human(need)}, more than the {human(limit)} allowed ({source})")


def check_sparse_dims(path, nrows: int, ncols: int, entries: int, line: int | None = None) -> None:
    """Refuse dims beyond int64, or so far beyond the entries that the file must be wrong, or
    whose compressed-row storage would not fit (see the module note)."""
    for n, what in ((nrows, "rows"), (ncols, "columns")):
        if n > INT64_MAX:
            raise DataFormatError(path, f"{n} {what} do not fit in 64 bits", line=line)
    ratio = max_dim_per_entry()
    top = max(DIM_FLOOR, ratio * entries)
    if max(nrows, ncols) > top:
        raise DataFormatError(path, f"declares a {nrows} x {ncols} matrix but holds {entries} "
                              f"entr{'y' if entries == 1 else 'ies'}: at most {top} rows and columns are allowed "
                              f"({ratio} per entry, and never fewer than {DIM_FLOOR}), since every row costs memory "
                              "on every process whether it holds entries or not: a mistyped size? To read a mostly "
                              "empty matrix, set DSPLA_MAX_DIM_PER_ENTRY (rows and columns allowed per entry)",
                              line=line)
    # CSR: row pointers, then column indices and values (16 bytes an entry), twice while converting
    check_bytes(path, 2 * (8 * (nrows + 1) + 16 * entries), f"a {nrows} x {ncols} sparse matrix with "
                f"{entries} entries", line=line)


def check_value_sizes(program, dims: dict, P: int) -> None:
    """Every dense value the program makes must fit in memory before anything is computed (its
    entries, per process at best: a P-th each): refused with the value, its size and the memory
    available (a 0 x 10^12 input makes X.T @ X 10^12 x 10^12). Sparse values are bounded by
    their inputs' checks."""
    for n in program.toposort():   # (nodes of dspla.ir, read by their type's shape, kind and dtype)
        t = n.type
        if not hasattr(t, "shape") or t.kind.value != "dense":
            continue   # (a loop's tuple: its items are checked where they are made)
        r, c = (d if isinstance(d, int) else dims.get(d, 0) for d in t.shape)
        need = r * c * t.dtype.np.itemsize
        if need // max(1, P) > _AVAILABLE_FLOOR:   # (the memory available is read only when it may matter)
            what = f"{n.label} ({n.span})" if n.span is not None else n.label
            check_memory(need // max(1, P), f"{what}, a {t.kind.value} {r} x {c} {t.dtype.value} value"
                         + (f" (its share on each of the {P} processes)" if P > 1 else "") + ",")


_AVAILABLE_FLOOR = 1 << 28   # values below 256 MB are not weighed against the memory available


def file_bytes(path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


__all__ = ["DIM_FLOOR", "INT64_MAX", "available_memory", "check_bytes", "check_memory", "check_sparse_dims",
           "check_value_sizes",
           "file_bytes", "human", "max_input_bytes", "parse_size"]
