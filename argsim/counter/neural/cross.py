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

CROSS_MARKER = "argsim_cross_encoder.json"


def is_cross_folder(folder: str | Path) -> bool:
    return (Path(folder) / CROSS_MARKER).is_file()


class CrossScorer:
    """P(c is the best counter of p) from a trained cross-encoder folder; pair scores memoised in memory."""

    def __init__(self, folder: str | Path, batch_size: int = 32, max_length: int | None = None) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        folder = Path(folder)
        if not is_cross_folder(folder):
            raise ModelError(f"{folder}: not a trained cross-encoder (train one with `argsim train bipolar "
                             "--kind cross-encoder`)")
        meta = json.loads((folder / CROSS_MARKER).read_text(encoding="utf-8"))
        self.max_length = max_length or int(meta.get("max_length", 256))
        self.tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(str(folder), local_files_only=True).eval()
        self.batch_size, self._torch, self._memo = batch_size, torch, {}

    def score(self, pairs: Sequence[tuple[str, str]], show_progress: bool = False) -> np.ndarray:
        torch = self._torch
        todo = list(dict.fromkeys(p for p in pairs if p not in self._memo))
        todo.sort(key=lambda p: -(len(p[0]) + len(p[1])))
        with torch.inference_mode(), progress_bar(len(todo), "cross-encoder", enabled=show_progress) as bar:
            for s in range(0, len(todo), self.batch_size):
                chunk = todo[s:s + self.batch_size]
                enc = self.tokenizer([a for a, _ in chunk], [b for _, b in chunk], padding=True, truncation=True,
                                     max_length=self.max_length, return_tensors="pt")
                probs = self.model(**enc).logits.softmax(-1)[:, 1].float().numpy()
                self._memo.update(zip(chunk, probs.tolist(), strict=True))
                bar.advance(len(chunk))
        return np.asarray([self._memo[p] for p in pairs], dtype=np.float64)


def train_cross_encoder(base_model: str, train_pairs: Sequence[tuple[str, str]], collection: Sequence[str],
                        out_dir: str | Path, epochs: int = 1, lr: float = 2e-5, batch_size: int = 16,
                        max_length: int = 256, max_pairs: int | None = None, seed: int = 13, resume: bool = False,
                        max_minutes: float | None = None, log: Callable[[dict], None] | None = None) -> list[dict]:
    """Pointwise training: each pair gives (p, c, 1) and (p, random negative, 0); Adam; saved every epoch."""
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
    if max_pairs is not None and max_pairs < len(pairs):
        pairs = [pairs[i] for i in sorted(rng.choice(len(pairs), size=max_pairs, replace=False))]
    collection = list(collection)
    history, start, elapsed = [], 1, 0.0
    if resume and ckpt.is_file():
        state = torch.load(ckpt, map_location="cpu", weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        rng.bit_generator.state = state["rng"]
        history, start = state["history"], state["epoch"] + 1
        elapsed = history[-1]["seconds"] if history else 0.0
    for epoch in range(start, epochs + 1):
        t0 = time.perf_counter()
        examples = []
        for p, c in pairs:
            n = c
            while n == c or n == p:
                n = collection[int(rng.integers(0, len(collection)))]
            examples += [(p, c, 1), (p, n, 0)]
        order = rng.permutation(len(examples))
        model.train()
        losses = []
        stopped = False
        with progress_bar(len(order), f"cross-encoder epoch {epoch}/{epochs}") as bar:
            for s in range(0, len(order), batch_size):
                batch = [examples[i] for i in order[s:s + batch_size]]
                enc = tokenizer([a for a, _, _ in batch], [b for _, b, _ in batch], padding=True, truncation=True,
                                max_length=max_length, return_tensors="pt")
                labels = torch.tensor([y for _, _, y in batch])
                loss = torch.nn.functional.cross_entropy(model(**enc).logits, labels)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
                bar.advance(len(batch))
                if max_minutes is not None and (elapsed + time.perf_counter() - t0) / 60 >= max_minutes:
                    stopped = True
                    break
        elapsed += time.perf_counter() - t0
        history.append({"epoch": epoch, "loss": float(np.mean(losses)), "examples": len(losses) * batch_size,
                        "seconds": round(elapsed, 2), "stopped_early": stopped})
        if log:
            log(history[-1])
        model.save_pretrained(out_dir)
        tokenizer.save_pretrained(out_dir)
        write_json(out_dir / CROSS_MARKER, {"kind": "cross-encoder", "base_model": base_model,
                                            "max_length": max_length, "lr": lr, "batch_size": batch_size,
                                            "train_pairs": len(pairs), "history": history})
        tmp = ckpt.with_suffix(".tmp")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "rng": rng.bit_generator.state,
                    "epoch": epoch, "history": history}, tmp)
        os.replace(tmp, ckpt)
        if stopped:
            break
    return history
