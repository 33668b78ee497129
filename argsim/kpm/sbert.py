"""Siamese SBERT / SRoBERTa fine-tuning on labelled (argument, key point) pairs (Mariani & Marinelli).

A shared sentence-transformers encoder (mean or CLS pooling); the loss is either a cosine-similarity regression
towards target 1 for matches and 0.5 for non-matches (the report's best setting), or sentence-transformers'
ContrastiveLoss. The learning rate decays linearly from `lr` to `lr_end` (the report's "(8e-6, 1e-6)"
schedules). The result is a plain sentence-transformers folder: `get_encoder(folder)` and
`SentenceTransformer(folder)` load it.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from argsim.data.argkp import KPMData
from argsim.errors import ArgsimError

LOSSES = ("cosine", "contrastive")
TRAIN_INFO = "argsim_train.json"


@dataclass
class SbertConfig:
    model: str = "minilm"
    loss: str = "cosine"
    positive_target: float = 1.0
    negative_target: float = 0.5
    contrastive_margin: float = 0.5
    pooling: str | None = None  # None = the model's own; 'mean' or 'cls' rebuilds the pooling layer
    epochs: float = 1.0
    batch_size: int = 16
    lr: float = 8e-6
    lr_end: float = 1e-6
    warmup_ratio: float = 0.0
    max_seq_length: int = 64
    seed: int = 13
    max_steps: int = -1
    train_layers: int = 0  # >0: train only the top N layers on cached lower-layer states (argsim.backend.partial)


def pair_rows(data: KPMData, cfg: SbertConfig) -> dict[str, list]:
    """Columns (sentence1, sentence2, score|label) from the labelled pairs, in the labels file's order."""
    s1, s2, y = [], [], []
    for (aid, kid), label in data.labels.items():
        s1.append(data.arg_by_id[aid].text)
        s2.append(data.kp_by_id[kid].text)
        if cfg.loss == "cosine":
            y.append(cfg.positive_target if label == 1 else cfg.negative_target)
        else:
            y.append(int(label))
    if not s1:
        raise ArgsimError(f"{data.name}: no labelled pairs to train on")
    return {"sentence1": s1, "sentence2": s2, "label": y}


def _with_pooling(model, pooling: str):  # noqa: ANN001, ANN202
    from sentence_transformers import SentenceTransformer, models

    word = model[0]
    pool = models.Pooling(word.get_word_embedding_dimension(), pooling_mode=pooling)
    return SentenceTransformer(modules=[word, pool], device=model.device)


def _pooling_mode(model) -> str:  # noqa: ANN001
    pool = model[1]
    return "cls" if getattr(pool, "pooling_mode_cls_token", False) else "mean"


def _train_top_layers(model, rows: dict[str, list], loss, cfg: SbertConfig, quiet: bool) -> int:  # noqa: ANN001
    """The same objective on cached lower-layer states, updating only the top `cfg.train_layers` layers."""
    import random

    import torch
    from torch.optim.lr_scheduler import LambdaLR

    from argsim.backend.partial import TopLayerTrainer
    from argsim.progress import progress_bar

    word = model[0]
    top = TopLayerTrainer(word.auto_model, word.tokenizer, cfg.train_layers)
    pooling = _pooling_mode(model)
    order = list(range(len(rows["label"])))
    steps_per_epoch = math.ceil(len(order) / cfg.batch_size)
    total = steps_per_epoch * math.ceil(cfg.epochs)
    if cfg.max_steps > 0:
        total = min(total, cfg.max_steps)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr)
    warm = int(cfg.warmup_ratio * total)
    end = cfg.lr_end / cfg.lr

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / max(warm, 1)
        return 1.0 - (1.0 - end) * min(1.0, (step - warm) / max(total - warm, 1))

    sched = LambdaLR(opt, factor)
    rng = random.Random(cfg.seed)
    model.train()
    step = 0
    with progress_bar(total, "sbert (top layers)", enabled=not quiet) as bar:
        while step < total:
            rng.shuffle(order)
            for start in range(0, len(order), cfg.batch_size):
                if step >= total:
                    break
                idx = order[start:start + cfg.batch_size]
                e1 = top.features([rows["sentence1"][i] for i in idx], cfg.max_seq_length, pooling)
                e2 = top.features([rows["sentence2"][i] for i in idx], cfg.max_seq_length, pooling)
                labels = torch.tensor([rows["label"][i] for i in idx], dtype=torch.float32, device=e1.device)
                value = loss.compute_loss_from_embeddings([e1, e2], labels)
                opt.zero_grad()
                value.backward()
                torch.nn.utils.clip_grad_norm_(params, 1.0)
                opt.step()
                sched.step()
                step += 1
                bar.advance(1)
    model.eval()
    return step


def train_sbert(train: KPMData, out: str | Path, cfg: SbertConfig, device: str | None = None,
                quiet: bool = False) -> dict:
    """Fine-tune, save a sentence-transformers folder at `out`, return the training info."""
    import datasets
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments

    try:  # sentence-transformers >= 6 moved the losses; 5.x has them at the top level
        from sentence_transformers.sentence_transformer import losses
    except ImportError:  # pragma: no cover
        from sentence_transformers import losses

    from argsim.backend import load_sentence_transformer
    from argsim.settings import seed_everything

    if cfg.loss not in LOSSES:
        raise ArgsimError(f"unknown loss '{cfg.loss}': choose {' or '.join(LOSSES)}")
    seed_everything(cfg.seed)
    out = Path(out)
    model = load_sentence_transformer(cfg.model, device=device)
    if cfg.pooling:
        model = _with_pooling(model, cfg.pooling)
    model.max_seq_length = cfg.max_seq_length
    rows = pair_rows(train, cfg)
    loss = (losses.CosineSimilarityLoss(model) if cfg.loss == "cosine"
            else losses.ContrastiveLoss(model, margin=cfg.contrastive_margin))
    steps_per_epoch = math.ceil(len(rows["label"]) / cfg.batch_size)
    if cfg.train_layers > 0:
        start = time.perf_counter()
        steps = _train_top_layers(model, rows, loss, cfg, quiet)
        return _finish(model, out, cfg, train, len(rows["label"]), steps, steps_per_epoch, start)
    ds = datasets.Dataset.from_dict(rows)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(out / "checkpoints"), num_train_epochs=cfg.epochs, max_steps=cfg.max_steps,
        per_device_train_batch_size=cfg.batch_size, learning_rate=cfg.lr, warmup_ratio=cfg.warmup_ratio,
        lr_scheduler_type="polynomial", lr_scheduler_kwargs={"lr_end": cfg.lr_end, "power": 1.0},
        seed=cfg.seed, data_seed=cfg.seed, save_strategy="no", report_to="none", logging_steps=50,
        disable_tqdm=quiet, use_cpu=(str(model.device) == "cpu"), dataloader_drop_last=False)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=ds, loss=loss)
    start = time.perf_counter()
    trainer.train()
    return _finish(model, out, cfg, train, len(ds), trainer.state.global_step, steps_per_epoch, start)


def _finish(model, out: Path, cfg: SbertConfig, train: KPMData, pairs: int, steps: int,  # noqa: ANN001
            steps_per_epoch: int, start: float) -> dict:
    from argsim.io import write_json
    from argsim.results import peak_memory_mb

    seconds = time.perf_counter() - start
    model.save(str(out))
    info = {"method": "sbert", "config": asdict(cfg), "train": train.name, "pairs": pairs, "steps": steps,
            "seconds": round(seconds, 1), "seconds_per_epoch": round(seconds * steps_per_epoch / max(steps, 1), 1),
            "peak_mb": peak_memory_mb(), "device": str(model.device)}
    write_json(out / TRAIN_INFO, info)
    return info
