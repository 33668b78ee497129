"""Training loop: Adam, one sampled negative per pair and epoch, validation @1/K after every epoch,
early stopping, and the best model saved (the task's own metric chooses it: `AtOneOverKEvaluator`, accuracy@1/K
on the validation pairs) - through argsim.training's accelerate loop (the device, precision and
processes of the run, checkpoints under OUT/checkpoints at every epoch end and every --checkpoint-every steps,
`resume` continuing them exactly: the epoch's negatives, batch order and every random state are saved)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from argsim.counter.neural.config import NeuralConfig
from argsim.counter.neural.data import PairData
from argsim.counter.neural.heads import classification_loss, triplet_loss
from argsim.counter.neural.model import CounterModel
from argsim.counter.neural.sampling import NegativeSampler
from argsim.counter.neural.store import save_model
from argsim.counter.neural.validation import AtOneOverKEvaluator, heads_on_cpu
from argsim.io import write_json
from argsim.settings import seed_everything
from argsim.training import Budget, OptimPolicy, Placement, resolve_placement
from argsim.training.fit import fit
from argsim.training.loop import TrainLoop
from argsim.training.record import data_hash, train_config, write_records

HISTORY = "history.json"


def base_table(model: CounterModel, texts: list[str]) -> np.ndarray:
    """Base embeddings of every text (frozen: backend, disk-cached; trainable: the current towers)."""
    return model.embed_texts(texts, side="candidate", progress="embedding the texts")


def batch_loss(model: CounterModel, u: torch.Tensor, vp: torch.Tensor, vn: torch.Tensor) -> torch.Tensor:
    """The model kind's loss on base embeddings: triplet (retrieval) + CE on both pairs (classification)."""
    cfg = model.config
    loss = torch.zeros((), dtype=u.dtype, device=u.device)
    if cfg.has_retrieval:
        loss = loss + triplet_loss(model.retrieval(u, "point"), model.retrieval(vp, "candidate"),
                                   model.retrieval(vn, "candidate"), cfg.margin)
    if cfg.has_classifier:
        loss = loss + classification_loss(model.classify(u, vp), model.classify(u, vn))
    return loss


def validate(model: CounterModel, data: PairData, base: np.ndarray, k: int) -> float:
    """Validation accuracy@1/k against the whole validation collection (`AtOneOverKEvaluator`; the heads run on
    the CPU: they score precomputed NumPy embeddings)."""
    evaluator = AtOneOverKEvaluator(data, k)
    return evaluator(model, base=base)[evaluator.primary_metric]


def warm_start(model: CounterModel, folder: str | Path) -> None:
    """Start `model` from a saved model of the same kind and width (a folder or a shipped model's name): its heads
    (e.g. heads trained on the frozen encoder, before fine-tuning the encoder with them) and, when both hold LoRA
    tower adapters (`--train-encoder --lora-rank N`, e.g. the shipped `counter-bipolar`), the adapters' tensors
    too, so the run continues the saved model (training time adds up across runs and machines).

    Reading chosen: an adapter of another rank or alpha, or over another base, cannot be continued (its update
    would change), so it is refused (one line) rather than dropped; a saved model with adapters warm-starts a run
    without them (frozen encoder or full fine-tuning) with its heads only, as a heads-only model (the shipped
    `counter-bi-encoder`) warm-starts any run. A separate candidate tower takes the saved `candidate_encoder/`
    adapter, else the point tower's.

    Args:
        model: the new model (its towers already wrapped in their trainable adapters when `config.lora`).
        folder: the saved model (`store.load_model` reads it, checking its base).

    Raises:
        ModelError: another kind or width; adapters of another rank, alpha or base (one line).

    Example:
        >>> lora = NeuralConfig(train_encoder=True, lora_rank=16)
        >>> warm_start(CounterModel(lora), "counter-bipolar")  # doctest: +SKIP
    """
    from argsim.counter.neural.store import load_model
    from argsim.errors import ModelError

    source = load_model(folder)
    if source.config.kind != model.config.kind or source.dim != model.dim:
        raise ModelError(f"{folder}: a {source.config.kind} model of width {source.dim} cannot initialise a "
                         f"{model.config.kind} model of width {model.dim}")
    adapters = model.config.lora and source.config.lora
    if adapters:
        have, want = source.config, model.config
        if (have.lora_rank, have.lora_alpha, have.base_model) != (want.lora_rank, want.lora_alpha, want.base_model):
            raise ModelError(f"{folder}: its tower adapters (rank {have.lora_rank}, alpha {have.lora_alpha:g}, over "
                             f"{have.base_model}) cannot start towers of rank {want.lora_rank}, alpha "
                             f"{want.lora_alpha:g} over {want.base_model}: give --lora-rank {have.lora_rank} "
                             f"--lora-alpha {have.lora_alpha:g} --model {have.base_model}")
    heads = {k: v for k, v in source.state_dict().items() if not k.startswith(("point_tower.", "cand_tower."))}
    model.load_state_dict(heads, strict=False)
    if adapters:
        saved = Path(source.folder)
        model.point_tower.set_lora(saved / "point_encoder")
        if model.cand_tower is not model.point_tower:
            cand = saved / "candidate_encoder"
            model.cand_tower.set_lora(cand if cand.is_dir() else saved / "point_encoder")


def policy(config: NeuralConfig) -> OptimPolicy:
    """Adam (= AdamW with weight decay 0) at constant rates per parameter group, no clipping (as before)."""
    return OptimPolicy(lr=config.lr, weight_decay=0.0, schedule="constant", max_grad_norm=None)


def train(config: NeuralConfig, data: PairData, out_dir: str | Path, resume: bool = False,
          log: Callable[[dict], None] | None = None, max_minutes: float | None = None,
          model: CounterModel | None = None, init: str | Path | None = None, placement: Placement | None = None,
          budget: Budget | None = None) -> list[dict]:
    """Train `config.kind` on `data` through the accelerate loop; the best-validation model is saved in
    `out_dir` (rank 0). Returns the history.

    Model selection: `AtOneOverKEvaluator` (validation accuracy@1/`config.k_val`, section 6.3's figure) scores
    the untrained model and every epoch; the saved model is the epoch with the best score (strictly better than
    every earlier one, so the first of equal scores), and `config.patience` epochs without a better score stop
    the run.

    History rows: epoch (0 = untrained), loss, val (accuracy@1/k_val), hard (share of hard negatives),
    seconds (cumulative training time). `budget.max_minutes` (or `max_minutes`) stops after the epoch that
    crosses it (its validation decides the saved model); `budget.max_steps` stops mid-epoch with a checkpoint
    that `resume` continues exactly (the epoch's negatives and batch order are in the checkpoint). `init`: a
    saved model whose heads (and LoRA tower adapters, when both have them) start the training (`warm_start`).
    `placement`: device / precision / seed (default: the CPU, fp32, `config.seed`).
    """
    out_dir = Path(out_dir)
    placement = placement or resolve_placement("cpu", "fp32", seed=config.seed)
    budget = budget or Budget(max_minutes=max_minutes, resume=resume)
    epoch_minutes = budget.max_minutes  # checked at epoch ends, as the documented recipes expect
    loop_budget = replace(budget, max_minutes=None)
    seed_everything(config.seed)
    frozen = not config.train_encoder
    if model is None:
        dim = None
        if frozen:
            probe = CounterModel(NeuralConfig(kind="unipolar-ret", base_model=config.base_model,
                                              pooling=config.pooling, max_seq_length=config.max_seq_length), dim=1)
            dim = probe.embed_texts(["dimension probe"]).shape[1]
        model = CounterModel(config, dim=dim)
    if init is not None:
        warm_start(model, init)
    model.train_top_layers()
    groups = [{"params": model.head_parameters("retrieval"), "lr": config.lr},
              {"params": model.head_parameters("classification"), "lr": config.cls_lr or config.lr}]
    groups = [g for g in groups if g["params"]]
    if not frozen:
        groups.append({"params": [p for p in model.tower_parameters() if p.requires_grad], "lr": config.encoder_lr})
    sampler = NegativeSampler(data.train_pairs, data.train_collection, config.sampling, config.hard_rate,
                              config.hard_pool, seed=config.seed)
    base = base_table(model, data.texts) if frozen else None
    texts = np.asarray(data.texts, dtype=object)
    loop = TrainLoop(out_dir, placement, loop_budget, policy(config))
    evaluator = AtOneOverKEvaluator(data, config.k_val, base=base)  # chooses the saved epoch
    device = loop.device

    def loss_of(net: CounterModel, rows: tuple[np.ndarray, np.ndarray, np.ndarray]) -> torch.Tensor:
        p_idx, c_idx, n_idx = rows
        if frozen:
            u, vp, vn = (torch.from_numpy(base[i]).to(device) for i in (p_idx, c_idx, n_idx))
        else:
            u = net.base(list(texts[p_idx]), "point")
            vp = net.base(list(texts[c_idx]), "candidate")
            vn = net.base(list(texts[n_idx]), "candidate")
        return batch_loss(net, u, vp, vn)

    history: list[dict] = []
    order_rng = np.random.default_rng(config.seed + 1)
    current: dict = {}  # the epoch in progress: its negatives, order and hard share (for mid-epoch resume)

    def epoch_batches(idx: int) -> list:
        """Epoch idx + 1's batches: fresh negatives (hard ones from the current model) and a fresh order, drawn
        from the trainer's seeded generators; a resumed run takes the epoch in progress from its checkpoint."""
        nonlocal current
        epoch = idx + 1
        if current.get("epoch") != epoch:
            vectors = None
            if sampler.probability(epoch) > 0:
                table = base if frozen else base_table(model, data.texts)
                with heads_on_cpu(model):
                    vectors = model.retrieval_numpy(table, "candidate") if config.has_retrieval else table
            negatives, hard_share = sampler.sample(epoch, vectors)
            order = order_rng.permutation(len(data.train_pairs))
            current = {"epoch": epoch, "negatives": negatives.tolist(), "order": order.tolist(), "hard": hard_share}
        negatives, order = np.asarray(current["negatives"]), np.asarray(current["order"])
        return [(data.train_pairs[rows, 0], data.train_pairs[rows, 1], negatives[rows])
                for rows in (order[s:s + config.batch_size] for s in range(0, len(order), config.batch_size))]

    def on_epoch_end(row: dict, kept: bool) -> None:
        nonlocal current
        history.append({"epoch": row["epoch"], "loss": row["loss"], "val": row[evaluator.primary_metric],
                        "hard": current.get("hard", 0.0) if row["epoch"] else 0.0, "seconds": row["seconds"]})
        current = {}
        if log and loop.is_main:
            log(history[-1])
        if row["epoch"] and loop.is_main:
            write_json(out_dir / HISTORY, {"config": config.as_dict(), "data": data.info, "history": history})

    def keep(row: dict) -> None:
        save_model(model, out_dir, info={"epoch": row["epoch"], "val": row[evaluator.primary_metric],
                                         "data": data.info})

    def state() -> dict:
        return {"history": history, "sampler_rng": sampler.rng.bit_generator.state,
                "order_rng": order_rng.bit_generator.state, "current": current, "config": config.as_dict()}

    def restore(saved: dict) -> None:
        nonlocal history, current
        history, current = saved["history"], saved["current"]
        sampler.rng.bit_generator.state = saved["sampler_rng"]
        order_rng.bit_generator.state = saved["order_rng"]

    def legacy_state(extras: dict) -> dict:  # a checkpoint written before fit kept its own state
        rows = [{"epoch": h["epoch"], "loss": h["loss"], evaluator.primary_metric: h["val"],
                 "seconds": h["seconds"]} for h in extras["history"]]
        vals = [h["val"] for h in extras["history"]]
        best = max(range(len(vals)), key=lambda i: (vals[i] if vals[i] == vals[i] else -1.0, -i)) if vals else None
        return {"history": rows, "bad": extras["bad_epochs"], "elapsed": extras["elapsed"],
                "best": None if best is None else {"epoch": rows[best]["epoch"], "step": None,
                                                   "value": extras["best"]},
                "epoch_losses": list(extras.get("current", {}).get("losses", []))}

    n_batches = -(-len(data.train_pairs) // config.batch_size)
    run = fit(loop, model, groups, loss_of, epoch_batches, epochs=config.epochs, batches_per_epoch=n_batches,
              evaluator=evaluator, evaluate_untrained=True, patience=config.patience,
              max_epoch_minutes=epoch_minutes, keep=keep, on_epoch_end=on_epoch_end, state=state,
              legacy_state=legacy_state, on_resume=restore,
              progress=lambda idx: f"epoch {idx + 1}/{config.epochs}")
    elapsed = run.elapsed
    if loop.is_main:
        write_json(out_dir / HISTORY, {"config": config.as_dict(), "data": data.info, "history": history})
        best_row = max(history, key=lambda h: h["val"] if h["val"] == h["val"] else -1.0)
        run = {"steps": loop.steps, "seconds": round(elapsed, 2), "stopped_by": loop.stopped_by,
               "epochs_run": history[-1]["epoch"], "losses": [h["loss"] for h in history[1:]]}
        metrics = {f"val_at1_over_{config.k_val}_best": best_row["val"], "best_epoch": best_row["epoch"],
                   f"val_at1_over_{config.k_val}_untrained": history[0]["val"]}
        write_records(out_dir, train_config(f"counter-{config.kind}", placement, budget, policy(config),
                                            config.as_dict(), _data_hashes(data), run, metrics,
                                            base_model=config.base_model))
    return history


def _data_hashes(data: PairData) -> dict:
    texts = data.texts
    return {"train": data_hash([(texts[p], texts[c]) for p, c in data.train_pairs]),
            "val": data_hash([(texts[p], texts[c]) for p, c in data.val_pairs])}


def read_history(folder: str | Path) -> list[dict]:
    """FOLDER/history.json's rows (validated: `argsim.schemas.History`), [] when there is none."""
    from argsim.io import read_json
    from argsim.schemas import History, validate

    path = Path(folder) / HISTORY
    if not path.is_file():
        return []
    data = read_json(path)
    validate(History, data, path, what="a learning-curve table {history: [{epoch, val, loss}]}")
    return data["history"]
