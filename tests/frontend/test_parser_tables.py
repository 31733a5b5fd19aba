"""The parser's tables are kept in the user cache and read back as plain data only."""
from __future__ import annotations

import os
import pickle

from dspla.frontend import tables
from dspla.frontend.parser import parse

PROGRAM = "input A: sparse[n, n]\ninput X: dense[n, f]\nY = A @ X\noutput Y\n"
GRAMMAR = 'start: WORD+\n%import common.WORD\n%ignore " "\n'


def _kept(folder) -> list[str]:
    return [f for f in os.listdir(folder) if f.startswith("grammar-") and f.endswith(".pickle")]


def test_tables_are_kept_and_read_back(tmp_path, monkeypatch):
    monkeypatch.setenv("DSPLA_CACHE_DIR", str(tmp_path))
    first = tables.parser(GRAMMAR)
    assert len(_kept(tmp_path)) == 1
    again = tables.parser(GRAMMAR)   # from the file
    assert again.parse("a b c") == first.parse("a b c")


RAN: list[int] = []   # (calls of the function below, named to be found in the file)


def never_called_by_unpickling() -> int:
    RAN.append(1)
    return 0


class _Runs:
    def __reduce__(self):
        return (never_called_by_unpickling, ())


def test_a_kept_file_that_names_a_class_is_refused_and_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("DSPLA_CACHE_DIR", str(tmp_path))
    tables.parser(GRAMMAR)
    [name] = _kept(tmp_path)
    with open(tmp_path / name, "wb") as fh:   # (a file that would call never_called_by_unpickling())
        pickle.dump({"data": _Runs(), "memo": {}}, fh)
    assert b"never_called_by_unpickling" in (tmp_path / name).read_bytes()
    assert tables.parser(GRAMMAR).parse("x y").children[0] == "x"
    assert not RAN
    assert b"never_called_by_unpickling" not in (tmp_path / name).read_bytes()   # rebuilt: plain data again


def test_a_damaged_file_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("DSPLA_CACHE_DIR", str(tmp_path))
    tables.parser(GRAMMAR)
    [name] = _kept(tmp_path)
    (tmp_path / name).write_bytes(b"\x80\x05garbage")
    assert tables.parser(GRAMMAR).parse("x").children == ["x"]


def test_an_unwritable_cache_still_parses(tmp_path, monkeypatch):
    monkeypatch.setenv("DSPLA_CACHE_DIR", str(tmp_path / "file"))
    (tmp_path / "file").write_text("not a folder")
    assert parse(PROGRAM, "p.dspla").outputs
