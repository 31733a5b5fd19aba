"""What `dspla train` says, and what its JSON records, when the flags and the run disagree: the
node sampler (no fanout), --resume without or past a checkpoint, --dropout on a program without
dropout, and the per-rank planning times of the run that planned."""
from __future__ import annotations

import json
import re

import pytest

from dspla.cli.main import main

from conftest import ROOT

GCN = str(ROOT / "examples" / "gcn.dspla")
SBM = ["--dataset", "sbm", "--nodes", "2000", "--feature-dim", "16"]

# a step program without any dropout_mask (gradients generated)
NO_DROPOUT = """input A : sparse[n, n]
input X : dense[n, f]
input Y : dense[n, c]
input T : dense[n, 1]
param W : dense[f, c]
logits = (A + eye(n)) @ (X @ W)
loss = -reduce_all(log_softmax(logits) * Y * T)
output loss, logits
"""


def _help(capsys) -> str:
    assert main(["train", "--help"]) == 0
    return " ".join(capsys.readouterr().out.split())   # argparse wraps lines anywhere


def test_help_says_the_node_sampler_keeps_the_whole_2_hop_neighbourhood(capsys):
    text = _help(capsys)
    # the node sampler keeps every neighbour within 2 hops (Sampler.edges with k=None), which
    # is not the batch's induced subgraph
    assert "induced subgraph" not in text
    assert "node: the batch's whole 2-hop neighbourhood (every neighbour kept, no --fanout)" in text


def test_node_sampler_reports_no_fanout_and_warns_about_a_given_one(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["train", GCN, *SBM, "--epochs", "1", "--minibatch", "70", "--sampler", "node",
                 "--fanout", "5,5", "-q", "--json", str(out)]) == 0
    assert "--fanout 5,5 has no effect with --sampler node" in capsys.readouterr().err
    assert json.loads(out.read_text())["minibatch"]["fanout"] is None


def test_neighbor_sampler_reports_the_fanout_it_used(tmp_path, capsys):
    out = tmp_path / "r.json"
    assert main(["train", GCN, *SBM, "--epochs", "1", "--minibatch", "70", "--fanout", "4", "-q",
                 "--json", str(out)]) == 0
    assert "no effect" not in capsys.readouterr().err
    r = json.loads(out.read_text())
    assert r["minibatch"]["fanout"] == [4, 4]   # one value: every hop keeps 4
    # the full-graph evaluation planned in the first epoch: its time, not a later epoch's 0.0
    assert r["planning_s"] > 0 and r["comm_per_rank"][0]["planning_s"] > 0


def test_resume_without_a_checkpoint_says_it_starts_from_scratch(tmp_path, capsys):
    ck = tmp_path / "ck"
    assert main(["train", GCN, *SBM, "--epochs", "1", "--checkpoint", str(ck), "--resume"]) == 0
    assert f"no checkpoint in {ck}: starting from epoch 0" in capsys.readouterr().err
    (ck / "checkpoint.npz").unlink()
    assert main(["train", GCN, *SBM, "--epochs", "1", "--checkpoint", str(ck), "--resume", "-q"]) == 0
    assert "no checkpoint" not in capsys.readouterr().err   # -q: not a word


def test_resume_past_epochs_says_nothing_was_trained(tmp_path, capsys):
    ck, out = tmp_path / "ck", tmp_path / "r.json"
    assert main(["train", GCN, *SBM, "--epochs", "3", "--checkpoint", str(ck), "-q"]) == 0
    capsys.readouterr()
    assert main(["train", GCN, *SBM, "--epochs", "2", "--checkpoint", str(ck), "--resume", "-q",
                 "--json", str(out)]) == 0
    cap = capsys.readouterr()
    # a warning: printed with -q too
    assert "dspla: warning: the checkpoint is at epoch 3, past --epochs 2: nothing to train" in cap.err
    assert "after 3 epochs (0 in this run, resumed from epoch 3)" in cap.out
    r = json.loads(out.read_text())
    assert r["config"]["epochs"] == 2 and r["epochs_run"] == 3
    assert r["epochs_trained"] == 0 and r["resumed_from_epoch"] == 3
    assert any("past --epochs 2" in w for w in r["warnings"])


def test_resume_continues_and_counts_the_epochs_of_this_run(tmp_path, capsys):
    ck, out = tmp_path / "ck", tmp_path / "r.json"
    assert main(["train", GCN, *SBM, "--epochs", "2", "--checkpoint", str(ck), "-q"]) == 0
    assert main(["train", GCN, *SBM, "--epochs", "3", "--checkpoint", str(ck), "--resume", "--json", str(out)]) == 0
    cap = capsys.readouterr()
    assert f"resuming from {ck} after epoch 2" in cap.err and "nothing to train" not in cap.err
    r = json.loads(out.read_text())
    assert (r["epochs_run"], r["epochs_trained"], r["resumed_from_epoch"]) == (3, 1, 2)


def test_dropout_on_a_program_without_dropout_warns_and_records_none_applied(tmp_path, capsys):
    prog, out = tmp_path / "nodrop.dspla", tmp_path / "r.json"
    prog.write_text(NO_DROPOUT)
    assert main(["train", str(prog), *SBM, "--epochs", "1", "--dropout", "0.3", "-q", "--json", str(out)]) == 0
    err = capsys.readouterr().err
    assert "dspla: warning: the step program has no dropout_mask, so dropout 0.3 (--dropout) has no effect" in err
    r = json.loads(out.read_text())
    assert r["config"]["dropout"] == 0.3 and r["dropout_applied"] == 0.0   # asked for, and what ran
    assert len(r["warnings"]) == 1


@pytest.mark.parametrize("flag,applied", [([], 0.5), (["--dropout", "0.3"], 0.3)])
def test_dropout_applied_of_a_program_with_dropout(tmp_path, capsys, flag, applied):
    out = tmp_path / "r.json"
    # examples/gcn.dspla writes dropout_mask(..., 0.5, ...) twice
    assert main(["train", GCN, *SBM, "--epochs", "1", *flag, "-q", "--json", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err
    r = json.loads(out.read_text())
    assert r["dropout_applied"] == applied and r["warnings"] == []


def test_comm_per_rank_has_the_planning_runs_times(tmp_path):
    out = tmp_path / "r.json"
    assert main(["train", GCN, *SBM, "--epochs", "3", "-q", "--json", str(out)]) == 0
    r = json.loads(out.read_text())
    assert r["planning_s"] > 0
    for rank in r["comm_per_rank"]:
        # epochs after the first re-use the plan and report 0.0: these are the first run's
        assert rank["planning_s"] > 0 and rank["first_iteration_s"] > 0
    assert r["comm_per_rank"][0]["planning_s"] == pytest.approx(r["planning_s"])   # P = 1: the same clock


def test_summary_line_without_resume_is_unchanged(capsys):
    assert main(["train", GCN, *SBM, "--epochs", "1", "-q"]) == 0
    assert re.search(r"after 1 epochs, [0-9.]+ ms/epoch \(median\)", capsys.readouterr().out)
