"""The one training layer every argsim trainer goes through; its modules are listed in docs/training.md."""

from argsim.training.budget import Budget
from argsim.training.placement import Placement, TrainRun, is_main_process, resolve_placement
from argsim.training.policy import OptimPolicy
from argsim.training.run import begin_run

__all__ = ["Budget", "OptimPolicy", "Placement", "TrainRun", "begin_run", "is_main_process", "resolve_placement"]
