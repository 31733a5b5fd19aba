"""How a program moves: the plan IR (ir.py), layouts of distributed values, operand facts,
static evaluation, partitioning of dims, lowering (one rule per op), the data-movement plans
for sparse x dense products (plans/), plan choice by the cost model, the plan verifier and
explain. The steps run in the order of ``dspla.compiler.PIPELINE``."""
