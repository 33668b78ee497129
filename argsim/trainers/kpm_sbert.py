"""Siamese SBERT / SRoBERTa fine-tuning on labelled (argument, key point) pairs (Mariani & Marinelli).

A shared sentence-transformers encoder; the loss is a cosine regression towards 1 (matches) and 0.5 (the
report's best), ContrastiveLoss (the default: higher ArgKP dev mAP with MiniLM) or MultipleNegativesRankingLoss with
hard negatives (`mnrl_rows`); the rate decays linearly from `lr` to `lr_end` (the report's "(8e-6, 1e-6)"). The
folder is a plain sentence-transformers one, or with `lora_rank` / `init` a LoRA adapter over the installed base
(`argsim.backend.adapters`). The whole model trains with SentenceTransformerTrainer, `train_layers` on cached lower
layers with `fit` (one policy: AdamW, weight decay 0 - the top-layer path used 0.01 before); `eval_every`
keeps the best strict mAP of the evaluation split (`KPAMapEvaluator`, `fit`'s selection).
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from argsim.config import RunConfig
from argsim.data.argkp import KPMData
from argsim.errors import ArgsimError
from argsim.measure import peak_memory_mb
from argsim.options import check_settings, setting
from argsim.training import begin_run, resolve_placement
from argsim.training.record import TRAIN_INFO, data_hash, run_info, save_run


@dataclass
class SbertConfig:
    """The settings of `train_sbert` (one option of `argsim train sbert` each); the defaults are the recommended
    recipe (`argsim models build kpm-sbert`: dev mAP strict 0.814 / relaxed 0.955 with MiniLM).

    Example:
        >>> SbertConfig().loss, SbertConfig(loss="cosine", lr=8e-6, lr_end=1e-6).lr
        ('contrastive', 8e-06)
    """

    model: str = setting("minilm", "Base model: minilm, mpnet, a sentence-transformers folder or a Hugging Face id "
                         "(e.g. sentence-transformers/all-MiniLM-L6-v2).", model=True)
    loss: Literal["cosine", "contrastive", "mnrl"] = setting(
        "contrastive", "contrastive = ContrastiveLoss on the labelled pairs (recommended); cosine = regression of "
        "the cosine towards --positive-target / --negative-target (the report's best); mnrl = "
        "MultipleNegativesRankingLoss on (argument, matching key point, other key point of the topic and stance) "
        "with in-batch negatives (no-duplicates batches).")
    positive_target: float = setting(1.0, "--loss cosine: cosine target of matching pairs.", min=-1, max=1)
    negative_target: float = setting(0.5, "--loss cosine: cosine target of non-matching pairs.", min=-1, max=1)
    contrastive_margin: float = setting(0.5, "Margin (cosine distance) of the contrastive loss.", min=0)
    pooling: Literal["mean", "cls"] | None = setting(None, "mean or cls; default keeps the model's own pooling.")
    epochs: float = setting(1.0, "Epochs over the labelled pairs (the report: >1 overfits).", min=0.01)
    batch_size: int = setting(16, "Pairs per batch (the report used 16).", min=1)
    lr: float = setting(2e-5, "Initial learning rate.", min=0)
    lr_end: float = setting(0.0, "Final learning rate of the linear decay (= --lr for constant).", min=0)
    warmup_ratio: float = setting(0.0, "Share of the steps spent warming up linearly.", min=0, max=1)
    max_seq_length: int = setting(64, "Token limit per sentence.", min=1)
    seed: int = setting(13, "Random seed (the global --seed).", cli=False)
    max_steps: int = setting(-1, "Optimizer steps (-1: the epochs; the CLI's --max-steps).", cli=False)
    train_layers: int = setting(0, "Train only the top N transformer layers on cached lower-layer states "
                                "(BERT-type models; ~3x faster on CPU). 0 = the sentence-transformers trainer on "
                                "the whole model.", min=0)
    lora_rank: int = setting(0, "Train a LoRA adapter of this rank over the attention and feed-forward layers "
                             "instead of the weights (e.g. 16); OUT then holds only the adapter (a few MB), loaded "
                             "over the installed base. 0 = train the weights.", min=0)
    lora_alpha: float = setting(32.0, "LoRA scale numerator (the update is multiplied by alpha / rank).", min=0)
    lora_dropout: float = setting(0.1, "Dropout on the LoRA adapter's input.", min=0, max=1)
    init: str | None = setting(None, "Continue training an adapter: a shipped model's name (e.g. kpm, see `argsim "
                               "models`) or a folder trained with --lora-rank; its base, rank and alpha replace "
                               "--model / --lora-rank / --lora-alpha (a --lora-rank given must be the adapter's).")
    eval_every: int = setting(0, "Score --eval-split with the official mAP every N steps and where the run ends, and "
                              "keep the weights with the best strict mAP, the first of equal scores (0: keep the "
                              "last weights).", min=0)

    def __post_init__(self) -> None:
        check_settings(self)
        if self.lr_end > self.lr:
            raise ArgsimError(f"--lr-end {self.lr_end:g} is above --lr {self.lr:g}: the rate decays from --lr to "
                              "--lr-end (equal values keep it constant)")


def pair_rows(data: KPMData, cfg: SbertConfig) -> dict[str, list]:
    """Columns (sentence1, sentence2, score|label) from the labelled pairs, in the labels file's order."""
    from argsim.trainers.kpm_cross import pair_rows as labelled_pairs

    rows = labelled_pairs(data)
    y = [(cfg.positive_target if v == 1 else cfg.negative_target) if cfg.loss == "cosine" else int(v)
         for v in rows["label"]]
    return {"sentence1": rows["argument"], "sentence2": rows["key_point"], "label": y}


def mnrl_rows(data: KPMData, seed: int = 13) -> dict[str, list]:
    """Columns (anchor, positive, negative) for MultipleNegativesRankingLoss: one row per labelled matching
    (argument, key point) pair; the hard negative is another key point of the same topic and stance that the
    argument does not match - drawn (seeded) among its labelled non-matches, else among the unlabelled ones;
    a pair whose topic and stance has no other key point is dropped (ArgKP train: 4,161 of 4,260 pairs kept).

    Reading chosen for in-batch false negatives: the no-duplicates batch sampler keeps any text from appearing
    twice in a batch; an argument's other match appearing as another row's positive (240 of ArgKP train's 4,018
    matched arguments match several key points) still counts as a negative (GISTEmbedLoss would need a guide)."""
    rng = random.Random(seed)
    matched: dict[str, list[str]] = {}
    labelled_neg: dict[str, list[str]] = {}
    for (aid, kid), y in data.labels.items():
        (matched if y == 1 else labelled_neg).setdefault(aid, []).append(kid)
    anchor, positive, negative = [], [], []
    for (aid, kid), y in data.labels.items():
        if y != 1:
            continue
        arg = data.arg_by_id[aid]
        if pool := labelled_neg.get(aid) or [k.kp_id for k in data.candidates(arg) if k.kp_id not in matched[aid]]:
            anchor.append(arg.text)
            positive.append(data.kp_by_id[kid].text)
            negative.append(data.kp_by_id[pool[rng.randrange(len(pool))]].text)
    if not anchor:
        raise ArgsimError(f"{data.name}: no matching pair has another key point of its topic and stance to "
                          "serve as a hard negative")
    return {"anchor": anchor, "positive": positive, "negative": negative}


def _top_layers_loss(model, rows: dict[str, list], loss, cfg: SbertConfig):
    """`loss` as `fit` takes it for a batch of row indices, on the top `cfg.train_layers` layers over cached
    lower-layer states (the lower ones frozen)."""
    import torch

    from argsim.backend.partial import TopLayerTrainer

    top = TopLayerTrainer(model[0].auto_model, model[0].tokenizer, cfg.train_layers)
    pooling = "cls" if getattr(model[1], "pooling_mode_cls_token", False) else "mean"

    def loss_of(_net, idx: list[int]) -> torch.Tensor:
        e1 = top.features([rows["sentence1"][i] for i in idx], cfg.max_seq_length, pooling)
        e2 = top.features([rows["sentence2"][i] for i in idx], cfg.max_seq_length, pooling)
        labels = torch.tensor([rows["label"][i] for i in idx], dtype=torch.float32, device=e1.device)
        return loss.compute_loss_from_embeddings([e1, e2], labels)

    return loss_of


def _load_model(cfg: SbertConfig, device: str):
    """The model to train: the base (re-pooled, LoRA-wrapped as `cfg` says) or `cfg.init`'s adapter, trainable."""
    from argsim.backend import load_sentence_transformer
    from argsim.backend.adapters import add_lora, continue_adapter

    if cfg.init:
        if cfg.pooling:
            raise ArgsimError("--init keeps the adapter's own pooling: drop --pooling")
        model, cfg.model, cfg.lora_rank, cfg.lora_alpha = continue_adapter(cfg.init, device, rank=cfg.lora_rank)
        return model
    model = load_sentence_transformer(cfg.model, device=device)
    if cfg.pooling:
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Pooling

        pool = Pooling(model[0].get_word_embedding_dimension(), pooling_mode=cfg.pooling)
        model = SentenceTransformer(modules=[model[0], pool], device=model.device)
    if cfg.lora_rank > 0:
        add_lora(model, cfg.lora_rank, cfg.lora_alpha, cfg.lora_dropout)
    return model


def train_sbert(train: KPMData, out: str | Path, cfg: SbertConfig, device: str | None = None,
                quiet: bool = False, placement=None, budget=None, eval_data: KPMData | None = None) -> dict:
    """Fine-tune, save a sentence-transformers (or adapter) folder at `out` (rank 0), return the training info.
    `placement`: default `device` or the CPU, fp32, `cfg.seed`; `budget`: default `cfg.max_steps`; `eval_data`:
    the labelled split that `cfg.eval_every` scores."""
    from argsim.backend.adapters import is_lora
    from argsim.backend.models import set_st_max_seq_length
    from argsim.evaluation.kpa_map import KPAMapEvaluator
    from argsim.training.trainer import fit, save_st, shuffled_batches

    if cfg.loss == "mnrl" and cfg.train_layers > 0:
        raise ArgsimError("--loss mnrl trains the whole model (sentence-transformers trainer): drop --train-layers")
    if (cfg.lora_rank > 0 or cfg.init) and cfg.train_layers > 0:
        raise ArgsimError("--lora-rank / --init train an adapter over every layer: drop --train-layers")
    if cfg.eval_every > 0 and (cfg.train_layers > 0 or eval_data is None):
        raise ArgsimError("--eval-every needs an evaluation split (--eval-split) and the sentence-transformers "
                          "trainer (no --train-layers)")
    placement = placement or (resolve_placement(device, "fp32", seed=cfg.seed) if device else None)
    where = begin_run(cfg, out, placement, budget, cfg.eval_every, trainer="kpm-sbert", max_steps=cfg.max_steps)
    model = _load_model(cfg, where.placement.device)
    set_st_max_seq_length(model, str(cfg.model), cfg.max_seq_length)
    rows, loss, extra = _rows_and_loss(model, train, cfg)
    if cfg.train_layers > 0:  # the same objective on a ModuleData of row indices (`fit`'s ModuleTrainer)
        data = shuffled_batches(range(len(rows["label"])), cfg.batch_size, cfg.seed, key=rows)
        trainer, run = fit(model, data, where, _top_layers_loss(model, rows, loss, cfg))
    else:
        evaluator = KPAMapEvaluator(eval_data, name=eval_data.name.removeprefix("argkp-"),  # weights change: no cache
                                    config=RunConfig(use_cache=False, quiet=True)) if cfg.eval_every else None
        trainer, run = fit(model, rows, where, loss, evaluator=evaluator, eval_every=cfg.eval_every,
                           disable_tqdm=quiet, dataloader_drop_last=False, **extra)
    pairs = len(next(iter(rows.values())))  # the columns are the loss's (no label column for mnrl)
    info = {"method": "sbert", "config": asdict(cfg), "train": train.name, "pairs": pairs, **run_info(where, run),
            "seconds_per_epoch": round(run["seconds"] * math.ceil(pairs / cfg.batch_size) / max(run["steps"], 1), 1),
            "peak_mb": peak_memory_mb(), **({"best": run["best"]} if run.get("best") else {})}
    if trainer.is_world_process_zero():  # the model (or its adapter), the info and the run's records
        if is_lora(model):
            info["trainable_parameters"] = sum(p.numel() for p in model.parameters() if p.requires_grad)
        save_st(model, where.out, cfg.model, {"data": train.name, "steps": info["steps"], "seconds": info["seconds"]})
        save_run(where, asdict(cfg), {train.name: data_hash(rows)}, run, base_model=cfg.model, files={TRAIN_INFO: info})
    return info


def _rows_and_loss(model, train: KPMData, cfg: SbertConfig) -> tuple[dict, object, dict]:
    """The training columns, the loss over them and the extra trainer arguments that `cfg.loss` needs."""
    from sentence_transformers.sentence_transformer import losses

    if cfg.loss == "mnrl":  # no text twice in a batch: see mnrl_rows
        return (mnrl_rows(train, cfg.seed), losses.MultipleNegativesRankingLoss(model),
                {"batch_sampler": "no_duplicates"})
    loss = (losses.CosineSimilarityLoss(model) if cfg.loss == "cosine"
            else losses.ContrastiveLoss(model, margin=cfg.contrastive_margin))
    return pair_rows(train, cfg), loss, {}
