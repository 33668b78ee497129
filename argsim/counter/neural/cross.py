"""Cross-encoder (section 4.2): "[CLS] p [SEP] c" -> linear -> softmax over 2 classes, cross-entropy loss.

Built on transformers' AutoModelForSequenceClassification (num_labels=2) from the backend's model folder; the
saved folder is a plain transformers classifier that sentence-transformers' `CrossEncoder` also loads.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from argsim.errors import ModelError
from argsim.io import write_json
from argsim.progress import progress_bar

CROSS_MARKER = "argsim_cross_encoder.json"  # options of a saved cross-encoder; its history: HISTORY
HISTORY = "history.json"  # the same file name as the other models' (training.read_history reads both)


def is_cross_folder(folder: str | Path) -> bool:
    return (Path(folder) / CROSS_MARKER).is_file()


class CrossScorer:
    """P(c is the best counter of p) from a trained cross-encoder folder; pair scores memoised in memory."""

    def __init__(self, folder: str | Path, batch_size: int = 32, max_length: int | None = None) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        folder = Path(folder)
        if not is_cross_folder(folder):
            raise ModelError(f"{folder}: not a trained cross-encoder (train one with `argsim train bipolar "
                             "--kind cross-encoder`)")
        meta = json.loads((folder / CROSS_MARKER).read_text(encoding="utf-8"))
        self.max_length = max_length or int(meta.get("max_length", 256))
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(str(folder), local_files_only=True).eval()
        self.batch_size, self._memo = batch_size, {}

    def score(self, pairs: Sequence[tuple[str, str]], show_progress: bool = False) -> np.ndarray:
        todo = list(dict.fromkeys(p for p in pairs if p not in self._memo))
        with progress_bar(len(todo), "cross-encoder", enabled=show_progress) as bar:
            probs = score_pairs(self.model, self.tokenizer, todo, self.max_length, self.batch_size, bar.advance)
        self._memo.update(zip(todo, probs.tolist(), strict=True))
        return np.asarray([self._memo[p] for p in pairs], dtype=np.float64)


def score_pairs(model, tokenizer, pairs: Sequence[tuple[str, str]], max_length: int,  # noqa: ANN001
                batch_size: int = 32, advance: Callable[[int], None] | None = None) -> np.ndarray:
    """P(class 1) of every (point, candidate) pair; longest pairs first so batches pad little; order kept."""
    import torch

    out = np.zeros(len(pairs), dtype=np.float64)
    order = sorted(range(len(pairs)), key=lambda i: -(len(pairs[i][0]) + len(pairs[i][1])))
    was_training = model.training
    model.eval()
    with torch.inference_mode():
        for s in range(0, len(order), batch_size):
            idx = order[s:s + batch_size]
            enc = tokenizer([pairs[i][0] for i in idx], [pairs[i][1] for i in idx], padding=True, truncation=True,
                            max_length=max_length, return_tensors="pt")
            out[idx] = model(**enc).logits.softmax(-1)[:, 1].float().numpy()
            if advance:
                advance(len(idx))
    model.train(was_training)
    return out


def validation_choices(val_pairs: Sequence[tuple[str, str]], collection: Sequence[str], points: int = 100,
                       negatives: int = 4, seed: int = 13) -> list[list[tuple[str, str]]]:
    """Fixed validation questions: for up to `points` pairs, the true counter first, then `negatives` random
    other texts of the collection (never the point or its counter)."""
    rng = np.random.default_rng(seed)
    pairs = list(val_pairs)
    if points < len(pairs):
        pairs = [pairs[i] for i in sorted(rng.choice(len(pairs), size=points, replace=False))]
    pool = list(dict.fromkeys(collection))
    questions = []
    for p, c in pairs:
        others = [t for t in (pool[int(i)] for i in rng.permutation(len(pool))[:negatives + 2]) if t not in (p, c)]
        questions.append([(p, c)] + [(p, t) for t in others[:negatives]])
    return questions


def choice_accuracy(score: Callable[[list[tuple[str, str]]], np.ndarray],
                    questions: Sequence[Sequence[tuple[str, str]]]) -> float:
    """Share of questions whose first pair (the true counter) gets the highest score (ties count as misses)."""
    flat = [pair for q in questions for pair in q]
    scores, hits, at = score(flat), 0, 0
    for q in questions:
        s = scores[at:at + len(q)]
        hits += int(s[0] > s[1:].max()) if len(q) > 1 else 1
        at += len(q)
    return hits / max(len(questions), 1)


def train_cross_encoder(base_model: str, train_pairs: Sequence[tuple[str, str]], collection: Sequence[str],
                        out_dir: str | Path, epochs: int = 1, lr: float = 2e-5, batch_size: int = 16,
                        max_length: int = 256, seed: int = 13, resume: bool = False,
                        max_minutes: float | None = None, log: Callable[[dict], None] | None = None,
                        val_questions: Sequence[Sequence[tuple[str, str]]] = (), evals_per_epoch: int = 4
                        ) -> list[dict]:
    """Pointwise training: each pair gives (p, c, 1) and (p, random negative, 0); Adam; saved every epoch.

    With `val_questions` (see `validation_choices`) the model is validated before training (epoch 0) and
    `evals_per_epoch` times per epoch: history rows carry fractional epochs, the mean training loss since the
    previous row and `val` = accuracy of picking the true counter among its question's candidates.
    """
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from argsim.backend import model_path
    from argsim.settings import seed_everything

    seed_everything(seed)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ckpt = out_dir / "checkpoint.pt"
    src = str(model_path(base_model))
    tokenizer = AutoTokenizer.from_pretrained(src, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(src, num_labels=2, local_files_only=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    pairs = list(train_pairs)
    collection = list(collection)
    history, start, elapsed = [], 1, 0.0
    if resume and ckpt.is_file():
        state = torch.load(ckpt, map_location="cpu", weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        rng.bit_generator.state = state["rng"]
        history, start = state["history"], state["epoch"] + 1
        elapsed = history[-1]["seconds"] if history else 0.0

    def validate() -> float | None:
        if not val_questions:
            return None
        return round(choice_accuracy(lambda prs: score_pairs(model, tokenizer, prs, max_length), val_questions), 4)

    def record(row: dict) -> None:
        history.append(row)
        if log:
            log(row)

    if not history:
        record({"epoch": 0, "val": validate(), "loss": None, "examples": 0, "seconds": 0.0})
    for epoch in range(start, epochs + 1):
        t0 = time.perf_counter()
        examples = []
        for p, c in pairs:
            n = c
            while n == c or n == p:
                n = collection[int(rng.integers(0, len(collection)))]
            examples += [(p, c, 1), (p, n, 0)]
        order = rng.permutation(len(examples))
        steps = -(-len(order) // batch_size)
        checkpoints = {round(steps * (j + 1) / max(evals_per_epoch, 1)) for j in range(max(evals_per_epoch, 1))}
        model.train()
        losses: list[float] = []
        stopped = False
        with progress_bar(len(order), f"cross-encoder epoch {epoch}/{epochs}") as bar:
            for step in range(1, steps + 1):
                batch = [examples[i] for i in order[(step - 1) * batch_size:step * batch_size]]
                enc = tokenizer([a for a, _, _ in batch], [b for _, b, _ in batch], padding=True, truncation=True,
                                max_length=max_length, return_tensors="pt")
                labels = torch.tensor([y for _, _, y in batch])
                loss = torch.nn.functional.cross_entropy(model(**enc).logits, labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
                bar.advance(len(batch))
                stopped = max_minutes is not None and (elapsed + time.perf_counter() - t0) / 60 >= max_minutes
                if step in checkpoints or stopped:
                    record({"epoch": round(epoch - 1 + step / steps, 3), "val": validate(),
                            "loss": float(np.mean(losses)),
                            "examples": (epoch - 1) * len(order) + min(step * batch_size, len(order)),
                            "seconds": round(elapsed + time.perf_counter() - t0, 2), "stopped_early": stopped})
                    losses = []
                if stopped:
                    break
        elapsed += time.perf_counter() - t0
        model.save_pretrained(out_dir)
        tokenizer.save_pretrained(out_dir)
        write_json(out_dir / CROSS_MARKER, {"kind": "cross-encoder", "base_model": base_model,
                                            "max_length": max_length, "lr": lr, "batch_size": batch_size,
                                            "train_pairs": len(pairs)})
        write_json(out_dir / HISTORY, {"kind": "cross-encoder", "history": history})
        tmp = ckpt.with_suffix(".tmp")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "rng": rng.bit_generator.state,
                    "epoch": epoch, "history": history}, tmp)
        os.replace(tmp, ckpt)
        if stopped:
            break
    return history
