"""A malformed-data campaign, kept: every file below is wrong, and the command
reading it must say so with one message naming the file (and the line, for text formats), exit 2
and never show a traceback; files that claim sizes they do not hold must not make the process
allocate for the claim."""
from __future__ import annotations

import gzip
import io
import os
import pickle
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from dspla.cli.main import main
from dspla.formats.results import read_results

from conftest import dataset

PROG = "input A : sparse[n, n]\ninput X : dense[n, k]\nT = A @ X\noutput T\n"
BANNER = "%%MatrixMarket matrix coordinate real general\n"


def _mtx(body: str) -> bytes:
    return (BANNER + body).encode()


def _npy_header(shape, descr="<f8") -> bytes:
    hdr = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}".encode()
    hdr = hdr + b" " * (63 - (len(hdr) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr


def _npy(arr) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


def _zip(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _gz(data: bytes) -> bytes:
    return gzip.compress(data)


def _sparse_npz(fmt="coo", shape=(10**9, 10**9), drop=()) -> bytes:
    members = {"format.npy": _npy(np.array(fmt)), "shape.npy": _npy(np.array(shape, dtype=np.int64)),
               "row.npy": _npy(np.array([0])), "col.npy": _npy(np.array([0])), "data.npy": _npy(np.array([1.0]))}
    return _zip({k: v for k, v in members.items() if k[:-4] not in drop})


# (name, file name, contents, where the message must point, a fragment of the message)
MATRIX_FILES = [
    ("empty", "a.mtx", b"", "a.mtx:1", "not a MatrixMarket file"),
    ("no banner", "a.mtx", b"3 3 1\n1 1 1\n", "a.mtx:1", "not a MatrixMarket file"),
    ("short banner", "a.mtx", b"%%MatrixMarket matrix coordinate real\n3 3 1\n1 1 1\n", "a.mtx:1",
     "the banner must be"),
    ("bad format", "a.mtx", b"%%MatrixMarket matrix coordinat real general\n1 1 1\n1 1 1\n", "a.mtx:1", "format"),
    ("bad field", "a.mtx", b"%%MatrixMarket matrix coordinate quaternion general\n1 1 1\n1 1 1\n", "a.mtx:1", "field"),
    ("array pattern", "a.mtx", b"%%MatrixMarket matrix array pattern general\n1 1\n1\n", "a.mtx:1", "pattern"),
    ("no size line", "a.mtx", _mtx("% only comments\n"), "a.mtx:3", "ends before the size line"),
    ("size line count", "a.mtx", _mtx("3 3\n1 1 1\n"), "a.mtx:2", "the size line must be"),
    ("size line text", "a.mtx", _mtx("3 three 1\n1 1 1\n"), "a.mtx:2", "is not an integer"),
    ("size line negative", "a.mtx", _mtx("3 -3 1\n1 1 1\n"), "a.mtx:2", "negative"),
    ("size beyond int64", "a.mtx", _mtx("100000000000000000000 3 1\n1 1 1\n"), "a.mtx:2", "does not fit in 64 bits"),
    ("symmetric not square", "a.mtx", b"%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n", "a.mtx:2",
     "must be square"),
    ("too few entries", "a.mtx", _mtx("3 3 3\n1 1 1\n2 2 2\n"), "a.mtx:2", "declares 3 entries but the file has 2"),
    ("too many entries", "a.mtx", _mtx("3 3 1\n1 1 1\n2 2 2\n"), "a.mtx:4", "more entries than the 1 declared"),
    ("row out of range", "a.mtx", _mtx("3 3 2\n1 1 1\n4 1 1\n"), "a.mtx:4", "row index 4 out of range"),
    ("column zero", "a.mtx", _mtx("3 3 1\n1 0 1\n"), "a.mtx:3", "column index 0 out of range"),
    ("value not a number", "a.mtx", _mtx("3 3 2\n1 1 1\n2 2 two\n"), "a.mtx:4", "is not a number"),
    ("too few columns", "a.mtx", _mtx("3 3 2\n1 1 1\n2 2\n"), "a.mtx:4", "too few columns"),
    ("skew diagonal", "a.mtx", b"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n", "a.mtx:3",
     "diagonal"),
    ("NaN value", "a.mtx", _mtx("3 3 2\n1 1 1\n% a comment\n2 2 nan\n"), "a.mtx:5", "NaN or infinite"),
    ("infinite value", "a.mtx", _mtx("3 3 2\n1 1 -inf\n2 2 1\n"), "a.mtx:3", "--allow-nonfinite"),
    ("index of 5000 digits", "a.mtx", _mtx("3 3 1\n" + "1" * 5000 + " 1 1\n"), "a.mtx:3", "row index"),
    ("size line 10^9", "a.mtx", _mtx("1000000000 1000000000 1\n1 1 1\n"), "a.mtx:2", "a mistyped size?"),
    ("size line 10^12", "a.mtx", _mtx("1000000000000 1000000000000 1\n1 1 1\n"), "a.mtx:2", "a mistyped size?"),
    ("not gzip", "a.mtx.gz", _mtx("1 1 1\n1 1 1\n"), "a.mtx.gz", "not a gzip file"),
    ("truncated gzip", "a.mtx.gz", _gz(_mtx("3 3 2\n1 1 1\n2 2 2\n"))[:-12], "a.mtx.gz", "corrupt or truncated"),
    ("npy bad magic", "x.npy", b"NOTNUMPY" + b"\0" * 100, "x.npy", "not a valid .npy array"),
    ("npy lying header", "x.npy", _npy_header((100000, 100000)) + b"\0" * 64, "x.npy",
     "the header says shape (100000, 100000)"),
    ("npy of objects", "x.npy", _npy(np.array([{"a": 1}], dtype=object)), "x.npy", "holds Python objects"),
    ("npy truncated", "x.npy", _npy(np.ones((60, 4)))[:-100], "x.npy", "only"),
    ("npy 3-D", "x.npy", _npy(np.ones((60, 4, 2))), "", "3 dimensions"),
    ("npy strings", "x.npy", _npy(np.array([["a", "b"]] * 60)), "x.npy", "inputs are numbers"),
    ("npy NaN", "x.npy", _npy(np.where(np.eye(60, 4) > 0, np.nan, 1.0)), "x.npy", "4 NaN"),
    ("npz not a zip", "x.npz", b"PK but not really", "x.npz", "not a readable .npz"),
    ("npz lying member", "x.npz", _zip({"X.npy": _npy_header((10**6, 10**6)) + b"\0" * 80}), "x.npz:X",
     "the header says shape"),
    ("npz of objects", "x.npz", _zip({"X.npy": _npy(np.array([None], dtype=object))}), "x.npz:X",
     "holds Python objects"),
    ("sparse npz lying shape", "a.npz", _sparse_npz(), "a.npz", "a mistyped size?"),
    ("sparse npz missing member", "a.npz", _sparse_npz("csr", (3, 3), drop=("row", "col")), "a.npz", "lacks"),
    ("npz missing key", "x.npz:Y", _zip({"X.npy": _npy(np.ones((60, 4)))}), "x.npz", "has no array 'Y'"),
    ("edges four columns", "a.txt", b"0 1\n1 2 3 4\n", "a.txt:2", "expected 2 columns"),
    ("edges negative id", "a.txt", b"0 1\n-1 2\n", "a.txt:2", "is negative"),
    ("edges not integer", "a.txt", b"0 1\n1 x\n", "a.txt:2", "is not an integer"),
    ("edges beyond int64", "a.txt", b"0 1\n1 99999999999999999999\n", "a.txt:2", "does not fit in 64 bits"),
    ("edges bad weight", "a.txt", b"0 1 1.5\n1 2 heavy\n", "a.txt:2", "is not a number"),
    ("unknown format", "a.csv", b"0,1\n", "a.csv", "unknown input format"),
]


def _write(tmp_path, fname, data) -> str:
    real = fname.split(":")[0]
    (tmp_path / real).write_bytes(data)
    return str(tmp_path / fname)


@pytest.mark.parametrize("name,fname,data,where,fragment", MATRIX_FILES, ids=[c[0] for c in MATRIX_FILES])
def test_a_malformed_data_file_gets_one_message_naming_it(tmp_path, capsys, name, fname, data, where, fragment):
    (tmp_path / "p.dspla").write_text(PROG)
    np.save(tmp_path / "good_x.npy", np.ones((60, 4)))
    sp_good = sp.random_array((60, 60), density=0.1, random_state=0, format="csr")
    sp.save_npz(tmp_path / "good_a.npz", sp.csr_matrix(sp_good))
    spec = _write(tmp_path, fname, data)
    as_x = fname.split(".")[0] == "x"
    inputs = [f"A={tmp_path / 'good_a.npz'}", f"X={spec}"] if as_x else [f"A={spec}", f"X={tmp_path / 'good_x.npy'}"]
    assert main(["run", str(tmp_path / "p.dspla"), *sum((["-i", s] for s in inputs), [])]) == 2
    out, err = capsys.readouterr()
    lines = err.rstrip("\n").split("\n")
    assert len(lines) == 1 and lines[0].startswith("dspla: error: "), err
    assert "Traceback" not in err and fragment in lines[0], err
    assert f"{tmp_path}/{where}" in lines[0] or not where, err


def test_nonfinite_values_are_accepted_with_a_warning_when_asked(tmp_path, capsys):
    (tmp_path / "p.dspla").write_text(PROG)
    (tmp_path / "a.mtx").write_bytes(_mtx("3 3 2\n1 1 1\n2 2 nan\n"))
    x = np.ones((3, 2))
    x[1, 0] = np.inf
    np.save(tmp_path / "x.npy", x)
    args = ["run", str(tmp_path / "p.dspla"), "-i", f"A={tmp_path / 'a.mtx'}", "-i", f"X={tmp_path / 'x.npy'}"]
    assert main(args + ["--allow-nonfinite", "--out", str(tmp_path / "o.npz")]) == 0
    err = capsys.readouterr().err
    assert err.count("dspla: warning:") == 2 and "a.mtx" in err and "x.npy" in err
    assert np.isnan(read_results(tmp_path / "o.npz")["T"][0]).any()


# --------------------------------------------------------------------------- Planetoid pickles
def _pkl_newobj(module: str, name: str, state: dict | None = None) -> bytes:
    """A protocol-2 pickle creating ``module.name`` with __new__ and (optionally) a state dict."""
    body = b"\x80\x02c" + f"{module}\n{name}\n".encode() + b")\x81"
    if state is not None:
        body += pickle.dumps(state, protocol=2)[2:-1] + b"b"   # the dict, then BUILD
    return body + b"."


PICKLES = [
    ("refused class", "x", b"cposix\nsystem\n(S'echo pwned'\ntR.", "refused to unpickle posix.system"),
    ("refused builtins eval", "graph", b"c__builtin__\neval\n(S'1+1'\ntR.", "refused to unpickle __builtin__.eval"),
    ("truncated", "y", None, "not a valid pickle"),
    ("empty", "tx", b"", "not a valid pickle"),
    ("csr without state", "x", _pkl_newobj("scipy.sparse._csr", "csr_matrix"), "incomplete or inconsistent"),
    ("csr with a huge shape only", "allx", _pkl_newobj("scipy.sparse._csr", "csr_matrix", {"_shape": (10**9, 10**9)}),
     "incomplete or inconsistent"),
    ("lil with mismatched rows", "tx", _pkl_newobj("scipy.sparse._lil", "lil_matrix",
                                                   {"_shape": (5, 3), "rows": np.empty(2, object),
                                                    "data": np.empty(2, object)}), "incomplete or inconsistent"),
    ("ndarray of 6 GB", "ally", b"cnumpy\nndarray\n((I1000000000\nI6\ntS'u1'\ntR.", "would take"),
    ("_reconstruct of 6 GB", "ty", b"cnumpy.core.multiarray\n_reconstruct\n(cnumpy\nndarray\n(I1000000000\nI6\ntS'u1'"
     b"\ntR.", "would take"),
    ("graph is a list", "graph", pickle.dumps([1, 2, 3], protocol=2), "expected a dict"),
    ("graph with text neighbours", "graph", pickle.dumps({0: ["a"]}, protocol=2), "must be integers"),
    ("labels not one-hot", "y", pickle.dumps(np.full((140, 7), 2), protocol=2), "one-hot"),
    ("features not sparse", "x", pickle.dumps(np.ones((140, 1433)), protocol=2), "expected a scipy sparse"),
]


@pytest.fixture(scope="module")
def cora():
    return dataset("planetoid")


@pytest.mark.parametrize("name,part,data,fragment", PICKLES, ids=[c[0] for c in PICKLES])
def test_a_malformed_planetoid_file(tmp_path, capsys, cora, name, part, data, fragment):
    d = tmp_path / "cora"
    d.mkdir()
    for f in cora.glob("ind.cora.*"):
        shutil.copy(f, d / f.name)
    target = d / f"ind.cora.{part}"
    target.write_bytes(target.read_bytes()[:40] if data is None else data)
    root = Path(__file__).resolve().parents[2]
    assert main(["train", str(root / "examples" / "gcn.dspla"), "--dataset", "cora", "--data-dir", str(d),
                 "--epochs", "1", "-q"]) == 2
    err = capsys.readouterr().err
    lines = err.rstrip("\n").split("\n")
    assert len(lines) == 1 and "Traceback" not in err and f"ind.cora.{part}" in lines[0] and fragment in lines[0], err


def test_a_test_index_that_is_not_numbers(tmp_path, capsys, cora):
    d = tmp_path / "cora"
    shutil.copytree(cora, d)
    lines = (d / "ind.cora.test.index").read_text().splitlines()
    lines[6] = "node-7"
    (d / "ind.cora.test.index").write_text("\n".join(lines) + "\n")
    assert main(["train", "examples/gcn.dspla", "--dataset", "cora", "--data-dir", str(d), "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert "ind.cora.test.index:7" in err and err.count("dspla:") == 1 and "Traceback" not in err


def test_the_data_campaign_has_at_least_40_files():
    assert len(MATRIX_FILES) + len(PICKLES) + 1 >= 40


# --------------------------------------------------------------------------- what the claims cost
# The child's own peak (VmHWM, reset by exec): getrusage's ru_maxrss also carries the peak of the
# pytest process it was forked from, which made these depend on what ran before them.
HWM = "int(next(x for x in open('/proc/self/status') if x.startswith('VmHWM')).split()[1]) // 1024"
PEAK = f"""import sys
from dspla.cli.main import main
code = main(sys.argv[1:])
print("peak_mb", {HWM}, "code", code)
"""


def _peak(tmp_path, *args) -> tuple[int, int, str]:
    script = tmp_path / "peak.py"
    script.write_text(PEAK)
    r = subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=True, text=True, timeout=120)
    words = r.stdout.split()
    return int(words[words.index("peak_mb") + 1]), int(words[words.index("code") + 1]), r.stderr


def _plain_run_peak(tmp_path) -> int:
    """The peak of a run of the same program on tiny well-formed inputs (a1.npz, x1.npy): the
    base a bomb is measured against, since a run imports and allocates more than a check."""
    np.save(tmp_path / "x1.npy", np.ones((3, 2)))
    sp.save_npz(tmp_path / "a1.npz", sp.csr_matrix(sp.eye(3)))
    peak, code, err = _peak(tmp_path, "run", _write_prog(tmp_path), "-i", f"A={tmp_path / 'a1.npz'}", "-i",
                            f"X={tmp_path / 'x1.npy'}")
    assert code == 0, err
    return peak


def _bomb_gz(path: Path, mb: int):
    """A small .mtx.gz whose header comment expands to ``mb`` MB."""
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(b"%%MatrixMarket matrix coordinate real general\n%")
        for _ in range(mb):
            f.write(b"x" * (1 << 20))
        f.write(b"\n3 3 1\n1 1 1.0\n")


BOMBS = [
    ("size line 10^9", "a.mtx", _mtx("1000000000 1000000000 1\n1 1 1\n")),
    ("npy claims 80 GB", "x.npy", _npy_header((100000, 100000)) + b"\0" * 64),
    ("npz member claims 8 TB", "x.npz", _zip({"X.npy": _npy_header((10**6, 10**6)) + b"\0" * 80})),
    ("coo npz of 10^9 rows", "a.npz", _sparse_npz()),
]


@pytest.mark.parametrize("name,fname,data", BOMBS, ids=[b[0] for b in BOMBS])
def test_a_claimed_size_is_never_allocated(tmp_path, name, fname, data):
    base = _plain_run_peak(tmp_path)
    spec = _write(tmp_path, fname, data)
    inputs = ["-i", f"A={tmp_path / 'a1.npz'}", "-i", f"X={spec}"] if fname.startswith("x") else \
        ["-i", f"A={spec}", "-i", f"X={tmp_path / 'x1.npy'}"]
    peak, code, err = _peak(tmp_path, "run", _write_prog(tmp_path), *inputs)
    assert code == 2 and "Traceback" not in err, err
    assert peak < base + 100, f"{name}: {peak} MB at the peak, {base} MB for a plain run"


def test_a_gzip_comment_expanding_to_300_mb_costs_no_300_mb(tmp_path):
    base = _plain_run_peak(tmp_path)
    _bomb_gz(tmp_path / "a.mtx.gz", 300)
    assert os.path.getsize(tmp_path / "a.mtx.gz") < 2 << 20
    peak, code, err = _peak(tmp_path, "run", _write_prog(tmp_path), "-i", f"A={tmp_path / 'a.mtx.gz'}", "-i",
                            f"X={tmp_path / 'x1.npy'}")
    assert code == 0, err
    assert peak < base + 100, f"{peak} MB at the peak, {base} MB for a plain run"


def test_a_pickled_6_gb_array_is_never_allocated(tmp_path):
    (tmp_path / "bomb.pkl").write_bytes(b"cnumpy\nndarray\n((I1000000000\nI6\ntS'u1'\ntR.")
    code = ("from dspla.formats.unpickle import restricted_load\nfrom dspla.errors import DataFormatError\n"
            f"try:\n    restricted_load({str(tmp_path / 'bomb.pkl')!r})\nexcept DataFormatError as e:\n"
            f"    print('refused')\nprint({HWM})\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.split()[0] == "refused" and int(r.stdout.split()[1]) < 400, r.stdout + r.stderr


def _write_prog(tmp_path) -> Path:
    p = tmp_path / "p.dspla"
    p.write_text(PROG)
    return p
