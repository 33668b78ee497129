"""End-to-end steps used by the CLI and the benchmark: mine and write triplets."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from argsim.config import RunConfig
from argsim.data.poliinfo import Meeting
from argsim.errors import ArgsimError
from argsim.io import write_jsonl
from argsim.minutes.mining import SPLITS, MiningConfig, corpus_lines, mine_triplets, split_meetings


def mine_minutes(meetings: list[Meeting], out: Path, config: MiningConfig | None = None,
                 model: str = "ginza", run: RunConfig | None = None) -> dict:
    """Clean, embed (backend encoder `model`, cached), split by meeting, mine and write
    `<out>/{train,dev,test}.jsonl`; returns counts and timings. `run`: the encoder's run options."""
    from argsim.backend import get_encoder

    config = config or MiningConfig()
    start = time.perf_counter()
    lines = corpus_lines(meetings, config.min_chars, config.boilerplate_min_count)
    if not lines:
        raise ArgsimError("no usable lines in the minutes (after noise and boilerplate removal)")
    t_clean = time.perf_counter() - start
    enc = get_encoder(model, config=run)
    vectors = enc.encode([x.text for x in lines], description=f"embedding minutes lines ({model})")
    t_embed = time.perf_counter() - start - t_clean
    splits = split_meetings(Counter(x.meeting for x in lines), config.fractions, config.seed)
    triplets, stats = mine_triplets(lines, vectors, config, splits)
    t_total = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    for s in SPLITS:
        write_jsonl(out / f"{s}.jsonl", [t for t in triplets if t["split"] == s])
    counts = {"meetings": len({m.id for m in meetings}), "utterances": sum(len(m.utterances) for m in meetings),
              "lines": len(lines), **{f"meetings {s}": sum(1 for v in splits.values() if v == s) for s in SPLITS},
              **dict(stats), "triplets": len(triplets)}
    return {"counts": counts, "config": config.__dict__ | {"model": model},
            "seconds": {"clean": round(t_clean, 2), "embed": round(t_embed, 2), "total": round(t_total, 2)}}
