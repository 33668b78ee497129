"""The one optimizer / learning-rate policy of every argsim trainer, stated once.

AdamW (decoupled weight decay; with weight decay 0 it is exactly Adam), a linear warm-up over `warmup_ratio` of
the planned optimizer steps, then a linear decay from `lr` to `lr_end` (0 by default) - or a constant rate
(`schedule="constant"`, after the warm-up). Gradients are clipped to `max_grad_norm` (None: no clipping).
The planned steps follow the epochs, never the budgets (`--max-steps`, `--max-minutes` only stop a run), so a
stopped and resumed run follows the same schedule as an uninterrupted one.

The sentence-transformers trainers get the same policy through `trainer_kwargs` (optim adamw_torch,
`linear` or `polynomial` power 1 down to `lr_end`, `constant_with_warmup`), the custom loops through
`build_optimizer` / `build_scheduler`; the warm-up length is transformers' ceil(ratio x steps) in both.

Each trainer's config holds its settings (`OptimPolicy.from_config`; the defaults per trainer, beside the papers'
values: docs/training.md, "One optimizer policy").
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

SCHEDULES = ("linear", "constant")


@dataclass(frozen=True)
class OptimPolicy:
    lr: float
    weight_decay: float = 0.0
    warmup_ratio: float = 0.0
    schedule: str = "linear"  # linear | constant
    lr_end: float = 0.0  # the rate reached at the last planned step (linear schedule)
    max_grad_norm: float | None = 1.0

    @classmethod
    def from_config(cls, config: object, **fixed: object) -> OptimPolicy:
        """The policy of a trainer's config: its fields named as the policy's (`lr`, `weight_decay`,
        `warmup_ratio`, `schedule`, `lr_end`, `max_grad_norm`), then `fixed` (what the trainer does not let the user
        set, or a field named otherwise), the rest the policy's defaults.

        Example:
            >>> from types import SimpleNamespace
            >>> p = OptimPolicy.from_config(SimpleNamespace(lr=1e-3, warmup_ratio=0.1, epochs=3), max_grad_norm=None)
            >>> p.lr, p.warmup_ratio, p.weight_decay, p.max_grad_norm
            (0.001, 0.1, 0.0, None)
        """
        values = {f.name: getattr(config, f.name) for f in fields(cls) if hasattr(config, f.name)}
        return cls(**(values | fixed))

    def as_dict(self) -> dict:
        return {"optimizer": "AdamW", **asdict(self)}

    def warmup_steps(self, total_steps: int) -> int:
        return math.ceil(total_steps * self.warmup_ratio)

    def factor(self, step: int, total_steps: int) -> float:
        """The learning-rate multiplier at optimizer step `step` (transformers' formulas)."""
        warm = self.warmup_steps(total_steps)
        if step < warm:
            return step / max(1, warm)
        if self.schedule == "constant":
            return 1.0
        end = self.lr_end / self.lr if self.lr else 0.0
        remaining = max(0.0, (total_steps - step) / max(1, total_steps - warm))
        return end + (1.0 - end) * remaining

    def trainer_kwargs(self) -> dict:
        """The policy as (SentenceTransformer|CrossEncoder)TrainingArguments keywords."""
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}")
        kw: dict = {"optim": "adamw_torch", "learning_rate": self.lr, "weight_decay": self.weight_decay,
                    "warmup_steps": self.warmup_ratio, "max_grad_norm": self.max_grad_norm or 0.0}
        if self.schedule == "constant" or (self.lr_end and self.lr_end >= self.lr):  # lr_end = lr: constant
            kw["lr_scheduler_type"] = "constant_with_warmup"
        elif self.lr_end:
            kw["lr_scheduler_type"] = "polynomial"
            kw["lr_scheduler_kwargs"] = {"lr_end": self.lr_end, "power": 1.0}
        else:
            kw["lr_scheduler_type"] = "linear"
        return kw


def build_optimizer(groups: list[dict], policy: OptimPolicy):
    """AdamW over parameter groups ({"params": [...], "lr": ...}; a group without "lr" gets `policy.lr`)."""
    import torch

    groups = [{**g, "params": [p for p in g["params"] if p.requires_grad]} for g in groups]
    groups = [g for g in groups if g["params"]]
    return torch.optim.AdamW(groups, lr=policy.lr, weight_decay=policy.weight_decay)


def build_scheduler(optimizer, policy: OptimPolicy, total_steps: int):
    from torch.optim.lr_scheduler import LambdaLR

    return LambdaLR(optimizer, lambda step: policy.factor(step, total_steps))
