"""Cross-encoder step cost: argsim's training engine against a plain PyTorch loop on the same batches.

The key point cross-encoder (MiniLM, batch 16, max length 96, BCE, AdamW lr 2e-5) for N steps over the first
ArgKP-2021 training pairs: (1) a bare loop - tokenizer, forward, BCEWithLogits, backward, AdamW step - and (2)
`train_cross` through `CrossEncoderTrainer` with the engine's records. Reports seconds per step of both; the
engine's includes the trainer's own start-up inside `train()`. Merges rows into
bench/results/no-regression.json.
Run: `.venv/bin/python bench/bench_cross_step.py [--steps 30] [--quick]`
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from argsim.data.argkp import load_argkp
from argsim.data.catalog import data_root
from argsim.results import environment, write_results


def plain_loop(rows: dict, steps: int, batch: int, max_length: int) -> tuple[float, float]:
    """Seconds per step of a bare training loop, and the mean padded length of its batches."""
    import torch

    from argsim.trainers.kpm_cross import load_cross_encoder

    ce = load_cross_encoder("minilm", "cpu", max_length, num_labels=1)
    tok, model = ce.tokenizer, ce.model
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5, weight_decay=0.0)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    model.train()
    lengths = []
    began = time.perf_counter()
    for i in range(steps):
        part = slice(i * batch, (i + 1) * batch)
        enc = tok(rows["argument"][part], rows["key_point"][part], padding=True, truncation=True,
                  max_length=max_length, return_tensors="pt")
        lengths.append(enc["input_ids"].shape[1])
        loss = loss_fn(model(**enc).logits.view(-1), torch.tensor(rows["label"][part], dtype=torch.float))
        loss.backward()
        opt.step()
        opt.zero_grad()
    return (time.perf_counter() - began) / steps, sum(lengths) / len(lengths)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--quick", action="store_true", help="10 steps")
    args = ap.parse_args()
    if args.quick:
        args.steps = 10
    from argsim.trainers.kpm_cross import CrossConfig, fit_cross, pair_rows
    from argsim.training import Budget

    train = load_argkp("train", data_root())
    rows = pair_rows(train, "none", "[SEP]")
    plain, padded = plain_loop(rows, args.steps, 16, 96)
    with tempfile.TemporaryDirectory() as tmp:
        _, info = fit_cross(train, Path(tmp) / "ce", CrossConfig(epochs=1.0), budget=Budget(max_steps=args.steps),
                            quiet=True)
    engine = info["seconds"] / info["steps"]
    print(f"plain loop {plain:.3f} s/step (mean padded length {padded:.1f}); engine {engine:.3f} s/step")
    base = {"model": "minilm", "split": "argkp-train", "metric": "seconds_per_step", "paper": None,
            "peak_mb": None}
    rows_out = [{**base, "method": "kpm cross-encoder step time", "value": round(plain, 3),
                 "setting": f"plain PyTorch loop, {args.steps} steps x 16 pairs, max length 96",
                 "seconds": round(plain * args.steps, 1), "extra": {"mean_padded_length": round(padded, 1)}},
                {**base, "method": "kpm cross-encoder step time", "value": round(engine, 3),
                 "setting": f"training engine (CrossEncoderTrainer), {args.steps} steps x 16 pairs, max length 96",
                 "seconds": info["seconds"]}]
    write_results("no-regression", rows_out, env=environment(seed=13, device="cpu"), merge=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
