"""The one training layer every argsim trainer goes through (see docs/training.md).

- `placement`: the device and precision actually used (`--device`, `--precision`), threads, processes, seed;
- `policy`: the optimizer / learning-rate policy, stated once (AdamW, warm-up, linear decay);
- `budget`: --max-steps, --max-minutes, --grad-accum, --checkpoint-every, --resume;
- `st`: sentence-transformers models through `SentenceTransformerTrainer` / `CrossEncoderTrainer` (`fit_st`:
  their one training function), the training arguments, resume and model selection every trainer shares;
- `module`: the custom torch models (MTS, BiLSTM, CounterModel, top-layer SBERT) on transformers' `Trainer`
  (`ModuleTrainer`, `fit_module`);
- `callbacks`: what argsim adds to the `Trainer`, one `TrainerCallback` per concern (budgets, interrupts, logs);
- `record`: train_config.json and the model card beside the weights (Hugging Face ids for --model resolve in
  `argsim.backend.hub`).
"""

from argsim.training.budget import Budget
from argsim.training.placement import (
    Placement,
    begin_run,
    is_main_process,
    placement_from_run,
    resolve_placement,
)
from argsim.training.policy import OptimPolicy

__all__ = ["Budget", "OptimPolicy", "Placement", "begin_run", "is_main_process", "placement_from_run",
           "resolve_placement"]
