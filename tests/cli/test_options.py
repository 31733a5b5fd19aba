"""The command line's options: every option of every command has help that says its default;
every value is checked, with a message naming the option and what it takes; an option given
twice is an error; a misspelt command or option gets "did you mean"; --version."""
from __future__ import annotations

import argparse

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from dspla import __version__
from dspla.cli.main import COMMANDS, build_parser, main

from conftest import ROOT

LAYER = str(ROOT / "examples" / "gcn_layer.dspla")
FLAGS = (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._StoreConstAction, argparse._VersionAction,
         argparse._HelpAction)


def _commands():
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub


def test_every_option_has_help_and_says_its_default():
    missing = []
    for name, parser in _commands().choices.items():
        fmt = parser._get_formatter()
        for a in parser._actions:
            if isinstance(a, argparse._HelpAction):
                continue
            text = fmt._expand_help(a) if a.help else ""
            what = f"{name} {'/'.join(a.option_strings) or a.dest}"
            if not text.strip():
                missing.append(f"{what}: no help")
            elif a.option_strings and not isinstance(a, FLAGS) and "default" not in text and not a.required:
                missing.append(f"{what}: no default in {text!r}")
    assert not missing, "\n".join(missing)


def test_the_command_list_is_the_commands_own_help():
    sub = _commands()
    helps = {c.dest: c.help for c in sub._choices_actions}
    assert {name: h for name, (_, h) in COMMANDS.items()} == helps


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"dspla {__version__}"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("opts")
    scipy.io.mmwrite(d / "a.mtx", sp.random_array((20, 20), density=0.2, random_state=0, format="coo"))
    np.save(d / "x.npy", np.ones((20, 3)))
    np.save(d / "w.npy", np.ones((3, 7)))
    np.save(d / "p2d.npy", np.zeros((2, 10), np.int64))
    np.save(d / "pfrac.npy", np.r_[np.zeros(19), 0.5])
    return d


@pytest.mark.parametrize("args,said", [
    (["--stripe-width", "0"], "argument --stripe-width: must be a whole number of at least 1, got 0"),
    (["--stripe-width", "-1"], "argument --stripe-width: must be a whole number of at least 1, got -1"),
    (["--message-bytes", "0"], "argument --message-bytes: must be a whole number of at least 1, got 0"),
    (["--memory-cap", "-5"], "argument --memory-cap/--memory-per-rank: must be a number above 0, got '-5'"),
    (["--seed", "-1"], "argument --seed: must be a whole number from 0 to 2147483647, got -1"),
    (["--seed", "x"], "argument --seed: must be a whole number from 0 to 2147483647, got 'x'"),
    (["--np", "0"], "argument --np: must be a whole number from 1 to"),
    (["--eps", "1"], "argument --eps: must be a number at least 0 and below 1, got '1'"),
    (["--replication", "0"], "argument --replication/-c: must be a whole number of at least 1, got 0"),
    (["--repeat", "0"], "argument --repeat: must be a whole number of at least 1, got 0"),
    (["--dim", "f=0"], "--dim takes NAME=SIZE with SIZE a whole number from 1 to 2^60"),
    (["--dim", "n=9223372036854775808"], "--dim takes NAME=SIZE with SIZE a whole number from 1 to 2^60"),
    (["--dim", "f=2", "--dim", "f=3"], "--dim f given twice (f=2 and f=3); give it once"),
    (["--seed", "1", "--seed", "2"], "argument --seed: given twice; give it once"),
    (["--partition", "hypergraf"], "unknown partition method 'hypergraf' (did you mean 'hypergraph'?)"),
    (["--sede", "3"], "unrecognized arguments: --sede 3 (did you mean '--seed'?)"),
])
def test_run_refuses_bad_values_naming_the_option(data, capsys, args, said):
    assert main(["run", LAYER, "-i", f"A={data / 'a.mtx'}", "-i", f"X={data / 'x.npy'}", "-i",
                 f"W={data / 'w.npy'}", *args]) == 2
    err = capsys.readouterr().err
    assert said in err, err


@pytest.mark.parametrize("name,said", [
    ("p2d.npy", "a partition is a 1-D array of process ids 0..0, one per row; this one has shape (2, 10)"),
    ("pfrac.npy", "entry 19 is 0.5, not a whole number"),
])
def test_a_partition_file_that_is_no_partition_is_refused_by_the_option(data, capsys, name, said):
    assert main(["run", LAYER, "-i", f"A={data / 'a.mtx'}", "-i", f"X={data / 'x.npy'}", "-i",
                 f"W={data / 'w.npy'}", "--partition-file", str(data / name)]) == 2
    err = capsys.readouterr().err
    assert f"--partition-file {data / name}: " in err and said in err, err


@pytest.mark.parametrize("argv,said", [
    (["rnu"], "invalid choice: 'rnu' (did you mean 'run'?)"),
    (["train", LAYER, "--epochs", "0"], "argument --epochs: must be a whole number of at least 1, got 0"),
    (["train", LAYER, "--lr", "0"], "argument --lr: must be a number above 0, got '0'"),
    (["train", LAYER, "--weight-decay", "-1"], "argument --weight-decay: must be a number at least 0, got '-1'"),
    (["demo", "--classes", "1"], "argument --classes: must be a whole number of at least 2, got 1"),
    (["comm-stats", "g.mtx", "-P", "0,4"], "argument -P: must be comma-separated whole numbers"),
    (["explain", LAYER, "--density", "0"], "argument --density: must be a number above 0 and at most 1"),
])
def test_other_commands_check_their_values_too(capsys, argv, said):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err, err
