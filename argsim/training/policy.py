"""The one optimizer / learning-rate policy of every argsim trainer (docs/training.md, "One optimizer policy"):
AdamW, warm-up over `warmup_ratio` of the planned steps, a linear decay from `lr` to `lr_end` or a constant rate."""

from __future__ import annotations

from dataclasses import dataclass, fields


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
        """The policy of a trainer's config (its fields named as the policy's), overridden by `fixed`.

        Example:
            >>> from types import SimpleNamespace
            >>> p = OptimPolicy.from_config(SimpleNamespace(lr=1e-3, warmup_ratio=0.1, epochs=3), max_grad_norm=None)
            >>> p.lr, p.warmup_ratio, p.weight_decay, p.max_grad_norm
            (0.001, 0.1, 0.0, None)
        """
        values = {f.name: getattr(config, f.name) for f in fields(cls) if hasattr(config, f.name)}
        return cls(**(values | fixed))

    def trainer_kwargs(self) -> dict:
        """The policy as (SentenceTransformer|CrossEncoder)TrainingArguments keywords."""
        if self.schedule not in ("linear", "constant"):
            raise ValueError("schedule must be linear or constant")
        kw: dict = {"optim": "adamw_torch", "learning_rate": self.lr, "weight_decay": self.weight_decay,
                    "warmup_steps": self.warmup_ratio, "max_grad_norm": self.max_grad_norm or 0.0,
                    "lr_scheduler_type": "linear"}
        if self.schedule == "constant" or (self.lr_end and self.lr_end >= self.lr):  # lr_end = lr: constant
            kw["lr_scheduler_type"] = "constant_with_warmup"
        elif self.lr_end:
            kw |= {"lr_scheduler_type": "polynomial", "lr_scheduler_kwargs": {"lr_end": self.lr_end, "power": 1.0}}
        return kw

