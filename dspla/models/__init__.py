"""Models written in dspla: the GCN training step, its normalisation helper, and the trainer.

    from dspla.models import gcn_norm, gcn_step, Trainer, TrainConfig, load_node_data
"""
from .data import NodeData, load_node_data, row_normalize
from .gcn import gcn_step, gcn_step_exprs
from .normalize import gcn_norm, gcn_norm_scipy
from .optim import SGD, Adam, make_optimizer
from .program import (
           check_step,
           differentiate,
           eval_program,
           set_dropout,
           training_program,
           without_dropout,
)
from .trainer import TrainConfig, Trainer, epoch_seed

__all__ = ["Adam", "NodeData", "SGD", "TrainConfig", "Trainer", "check_step", "differentiate", "epoch_seed",
           "eval_program",
           "gcn_norm", "gcn_norm_scipy", "gcn_step", "gcn_step_exprs", "load_node_data", "make_optimizer",
           "row_normalize", "set_dropout", "training_program", "without_dropout"]
