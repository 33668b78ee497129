"""The one training layer every argsim trainer goes through; its modules are listed in docs/training.md."""

from argsim.training.budget import Budget
from argsim.training.placement import Placement, TrainRun, begin_run, is_main_process, resolve_placement
from argsim.training.policy import OptimPolicy

__all__ = ["Budget", "OptimPolicy", "Placement", "TrainRun", "begin_run", "is_main_process", "resolve_placement"]
