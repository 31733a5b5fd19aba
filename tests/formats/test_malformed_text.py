"""Malformed inputs found by hand-written trial files: each must end in a DataFormatError (or
DsplaError) naming the file and, for text, the line -- never a bare "malformed" without a line,
a Python exception, or mojibake."""
import io
import os
import tracemalloc

import numpy as np
import pytest

from dspla.errors import DataFormatError, DsplaError
from dspla.formats import load_graph, read_input
from dspla.formats._textfile import lines_from, read_all
from dspla.formats.mtx import load_mtx
from dspla.formats.npy import load_npy
from dspla.formats.planetoid import _test_index
from dspla.formats.snap import load_snap

BANNER = "%%MatrixMarket matrix coordinate real general\n"
INT_BANNER = "%%MatrixMarket matrix coordinate integer general\n"


def _write(tmp_path, name, data):
    p = tmp_path / name
    if isinstance(data, str):
        data = data.encode("utf-8")
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("name, text, where, fragment", [
    # Python's float()/int() take "1_000"; numpy does not: the line was never named
    ("a.mtx", BANNER + "3 3 2\n1 1 1\n2 2 1_000\n", "a.mtx:4", "value '1_000' is not a number"),
    ("a.mtx", BANNER + "1_0 10 1\n1 1 1\n", "a.mtx:2", "'1_0' is not an integer"),
    ("a.mtx", BANNER + "3 3 1\n1_0 1 1\n", "a.mtx:3", "'1_0' is not an integer"),
    # an integer value beyond int64 fails numpy's parse, not the line check
    ("a.mtx", INT_BANNER + "3 3 1\n1 1 99999999999999999999\n", "a.mtx:3", "does not fit in 64 bits"),
    ("a.txt", "0 1\n1_0 2\n", "a.txt:2", "source node id '1_0' is not an integer"),
    ("a.txt", "0 1 1\n1 2 1_0\n", "a.txt:2", "edge value '1_0' is not a number"),
])
def test_bad_number_names_its_line(tmp_path, name, text, where, fragment):
    p = _write(tmp_path, name, text)
    with pytest.raises(DataFormatError) as e:
        load_graph(p)
    assert f"{where}:" in str(e.value) and fragment in str(e.value), str(e.value)


def test_planetoid_test_index_beyond_int64_names_its_line(tmp_path):
    p = _write(tmp_path, "ind.x.test.index", "5\n99999999999999999999\n")
    with pytest.raises(DataFormatError, match=r"test.index:2: test node id .* does not fit in 64 bits"):
        _test_index(str(p), 2, 0)


@pytest.mark.parametrize("name, text", [
    ("bom.mtx", "\ufeff" + BANNER + "2 2 1\n1 1 1\n"),
    ("bom.txt", "\ufeff0 1\n1 2\n"),
    ("bomc.txt", "\ufeff# comment\n0 1\n"),
])
def test_byte_order_mark_is_named(tmp_path, name, text):
    p = _write(tmp_path, name, text)
    with pytest.raises(DataFormatError) as e:
        load_graph(p)
    msg = str(e.value)
    assert f"{name}:1:" in msg and "byte-order mark" in msg and "\xef" not in msg, msg


def test_utf16_file_is_named(tmp_path):
    p = _write(tmp_path, "w.mtx", (BANNER + "2 2 1\n1 1 1\n").encode("utf-16"))
    with pytest.raises(DataFormatError, match="w.mtx:1: .*UTF-16 byte-order mark"):
        load_mtx(p)


def test_trailing_comment_on_the_first_edge_line(tmp_path):
    # the module says anything after the comment character is ignored: the first edge line too
    p = _write(tmp_path, "c.txt", "0 1 # first\n1 2\n")
    A = load_snap(p)
    assert A.shape == (3, 3) and A.nnz == 2 and A[0, 1] == 1 and A[1, 2] == 1
    p = _write(tmp_path, "w.txt", "0 1 5 # first\n1 2 6\n")
    assert load_snap(p, weighted=True)[0, 1] == 5


def test_symlink_loop_is_a_dspla_error(tmp_path):
    a, b = tmp_path / "a.mtx", tmp_path / "b.mtx"
    os.symlink(b, a)
    os.symlink(a, b)
    with pytest.raises(DsplaError, match="cannot read .*a.mtx"):
        load_graph(a)
    with pytest.raises(DsplaError, match="symbolic link that leads to no file"):
        read_input(str(a))


def test_npy_header_with_unbalanced_brackets(tmp_path):
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ones((3, 1)))
    data = buf.getvalue().replace(b"(3, 1), }", b"(100000, ")   # '(' never closed
    p = _write(tmp_path, "h.npy", data)
    with pytest.raises(DataFormatError, match="h.npy: not a valid .npy array"):
        load_npy(p)
    with pytest.raises(DataFormatError, match="h.npy: not a valid .npy array"):
        read_input(str(p))


def test_error_path_walks_lines_without_a_string_per_line():
    # the error path split the whole remaining text into one str per line (a body of 10M short
    # lines took 900 MB to report line 4); it walks the text instead
    text = "1 1 1\n" * 300_000
    tracemalloc.start()
    try:
        last = None
        for item in lines_from(text, 0, 1):
            last = item
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert last == (300_001, "")
    assert peak < len(text) // 4, peak


def test_error_path_reads_no_more_than_the_file(tmp_path):
    # read(cap + 1) reserved half the machine's memory for a 3-line file: under ulimit -v any
    # malformed file ended in a bare MemoryError instead of its line
    p = _write(tmp_path, "small.mtx", BANNER + "3 3 1\n4 1 1\n")
    tracemalloc.start()
    try:
        with pytest.raises(DataFormatError, match="small.mtx:3: row index 4 out of range"):
            load_mtx(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, peak
    assert read_all(p) == BANNER + "3 3 1\n4 1 1\n"


def test_a_nan_or_infinite_snap_weight_is_refused_at_its_line(tmp_path):
    """The third column is the edge values (by default): refused when not finite, as a
    MatrixMarket value is, naming the line (comment lines in between counted)."""
    from dspla.formats.snap import load_snap
    p = tmp_path / "w.txt"
    p.write_text("# c\n0 1 1.5\n# mid\n1 2 nan\n2 0 inf\n")
    for weighted in (None, True):
        with pytest.raises(DataFormatError) as e:
            load_snap(p, weighted=weighted)
        assert str(e.value) == f"{p}:4: 2 NaN or infinite weight(s), the first on this line: '1 2 nan'"
    assert load_snap(p, weighted=False).nnz == 3   # unweighted, the column is not a value
