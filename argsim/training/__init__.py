"""The one training layer every argsim trainer goes through (docs/training.md): `placement` (device, precision,
threads, seed), `policy` (the optimizer), `budget` (stops, accumulation, checkpoints, resume), `st` (the
sentence-transformers trainers: `fit_st`), `module` (custom torch models: `fit_module`), `callbacks`, `record`
(train_config.json and the card) and `curve` (learning_curve.png).
"""

from argsim.training.budget import Budget
from argsim.training.placement import (
    Placement,
    TrainRun,
    begin_run,
    is_main_process,
    placement_from_run,
    resolve_placement,
)
from argsim.training.policy import OptimPolicy

__all__ = ["Budget", "OptimPolicy", "Placement", "TrainRun", "begin_run", "is_main_process", "placement_from_run",
           "resolve_placement"]
