"""The transformer variant: a backend sentence-transformers model (MiniLM) fine-tuned on thematic triplets with
sentence-transformers' `TripletLoss` (Euclidean distance; margin 1 because MiniLM's vectors are unit length,
so distances lie in [0, 2] and the library default of 5 could never be met)."""

from __future__ import annotations

import json
import random
import shutil
import time
from pathlib import Path

from argsim.settings import RUNTIME


def _time_limit_callback():  # noqa: ANN202
    from transformers import TrainerCallback

    class TimeLimit(TrainerCallback):
        """Stop training after `minutes` of wall-clock time (the model trained so far is saved)."""

        def __init__(self, minutes: float) -> None:
            self.limit, self.start = minutes * 60, time.perf_counter()

        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001, ANN003, ANN201
            if time.perf_counter() - self.start > self.limit:
                control.should_training_stop = True
            return control

    return TimeLimit


def _TimeLimit(minutes: float):  # noqa: ANN202, N802
    return _time_limit_callback()(minutes)


def finetune_sentence_transformer(triplets: list[dict], out: Path, base: str = "minilm", epochs: int = 1,
                                  batch_size: int = 16, lr: float = 2e-5, margin: float = 1.0,
                                  max_triplets: int | None = None, max_seq_length: int = 64, seed: int = 13,
                                  device: str | None = None, max_minutes: float | None = None) -> dict:
    """Fine-tune `base` on (anchor, positive, negative) and save a sentence-transformers folder to `out`."""
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.sentence_transformer.losses import TripletDistanceMetric, TripletLoss

    from argsim.backend import load_sentence_transformer

    rng = random.Random(seed)
    if max_triplets and len(triplets) > max_triplets:
        triplets = rng.sample(triplets, max_triplets)
    model = load_sentence_transformer(base, device=device)
    model.max_seq_length = max_seq_length
    data = Dataset.from_dict({f: [t[f] for t in triplets] for f in ("anchor", "positive", "negative")})
    loss = TripletLoss(model, distance_metric=TripletDistanceMetric.EUCLIDEAN, triplet_margin=margin)
    out = Path(out)
    args = SentenceTransformerTrainingArguments(
        output_dir=str(out / "trainer"), num_train_epochs=epochs, per_device_train_batch_size=batch_size,
        learning_rate=lr, warmup_ratio=0.1, seed=seed, save_strategy="no", logging_steps=50, report_to=[],
        use_cpu=(model.device.type == "cpu"), disable_tqdm=RUNTIME.quiet)
    trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=data, loss=loss,
                                         callbacks=[_TimeLimit(max_minutes)] if max_minutes else None)
    began = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - began
    model.save(str(out))
    shutil.rmtree(out / "trainer", ignore_errors=True)
    seen = min(trainer.state.global_step * batch_size, len(triplets) * epochs)
    stats = {"base": base, "triplets": len(triplets), "triplets_seen": seen, "epochs": epochs,
             "batch_size": batch_size, "lr": lr,
             "margin": margin, "max_seq_length": max_seq_length, "seconds": seconds,
             "triplets_per_second": seen / seconds}
    (out / "argsim_training.json").write_text(json.dumps(stats, indent=2), encoding="utf-8")
    return stats
