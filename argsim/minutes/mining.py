"""Triplet mining from assembly minutes (Shirafuji et al., Sec. 3.1).

A cleaned line of an utterance is the target (anchor); the next line, when the same speaker says it and
its GiNZA cosine with the target is >= `pos_threshold` (0.5), is the positive; the negative is a line from
a different meeting (hence a different day or meeting) of the same split, drawn at random (seeded) until
one has cosine <= `neg_threshold` (0.9). Meetings are split 80/10/10 before mining, so no meeting feeds two
splits and negatives never cross splits.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from argsim.config import SEED, RunConfig
from argsim.data.poliinfo import Meeting
from argsim.errors import ArgsimError
from argsim.io import write_jsonl
from argsim.minutes.text import boilerplate, clean_lines
from argsim.options import setting
from argsim.vectors import l2_normalize

SPLITS = ("train", "dev", "test")


@dataclass(frozen=True)
class Line:
    """One cleaned line of the minutes with its meeting, date and speaker."""

    meeting: str
    date: str
    speaker: str
    text: str


@dataclass(frozen=True)
class MiningConfig:
    """The mining settings (Shirafuji et al., Sec. 3.1); each field but `fractions` and `seed` is one option of
    `argsim data triplets minutes` (see `argsim.options`).

    Example:
        >>> MiningConfig().pos_threshold, MiningConfig(max_draws=10).max_draws
        (0.5, 10)
    """

    pos_threshold: float = setting(0.5, "Minimum cosine of target and next line (positive).", min=-1, max=1)
    neg_threshold: float = setting(0.9, "Maximum cosine of target and a drawn negative.", min=-1, max=1)
    min_chars: int = setting(10, "Drop cleaned lines shorter than this.", min=0)
    boilerplate_min_count: int = setting(5, "Drop lines repeated verbatim this often (0: keep).", min=0)
    max_draws: int = setting(100, "Negative draws per target before giving up.", min=1)
    fractions: tuple[float, float, float] = setting((0.8, 0.1, 0.1), "Train / dev / test shares of the meetings.",
                                                    cli=False)
    seed: int = setting(SEED, "Random seed (the global --seed).", cli=False)


def corpus_lines(meetings: Sequence[Meeting], min_chars: int = MiningConfig.min_chars,
                 boilerplate_min_count: int = MiningConfig.boilerplate_min_count) -> list[Line]:
    """All cleaned lines in order; the roll/agenda block (speaker 'null') and recurring procedural lines
    (boilerplate, seen >= `boilerplate_min_count` times) are dropped."""
    lines = [Line(m.id, m.date, u.speaker, text) for m in meetings for u in m.utterances
             if u.speaker.strip() not in ("", "null") for text in clean_lines(u.text, min_chars)]
    if boilerplate_min_count > 0:
        drop = boilerplate((x.text for x in lines), boilerplate_min_count)
        lines = [x for x in lines if x.text not in drop]
    return lines


def split_meetings(meeting_sizes: dict[str, int], fractions: Sequence[float] = (0.8, 0.1, 0.1),
                   seed: int = SEED) -> dict[str, str]:
    """Assign whole meetings to train/dev/test in a seeded random order, by cumulative share of lines."""
    ids = sorted(meeting_sizes)
    np.random.default_rng(seed).shuffle(ids)
    sizes = np.array([meeting_sizes[m] for m in ids], dtype=np.int64)
    shares = (np.cumsum(sizes) - sizes) / max(1, sum(meeting_sizes.values()))  # lines before each meeting
    picks = np.searchsorted(np.cumsum(fractions) / np.sum(fractions), shares, side="right")
    return {m: SPLITS[int(p)] if s < 1 else SPLITS[-1] for m, s, p in zip(ids, shares, picks, strict=True)}


def mine_triplets(lines: Sequence[Line], vectors: np.ndarray, config: MiningConfig,
                  splits: dict[str, str]) -> tuple[list[dict], Counter]:
    """Mine (anchor, positive, negative) triplets; `vectors` are the lines' embeddings (any scale). Returns the
    triplets (dicts with their lines' meeting, date, speaker and cosines) and counters of what happened."""
    if len(lines) != len(vectors):
        raise ValueError("one vector per line is needed")
    unit = l2_normalize(vectors)
    pools = {s: np.array([i for i, x in enumerate(lines) if splits[x.meeting] == s], dtype=np.int64)
             for s in SPLITS}
    rng = np.random.default_rng(config.seed)
    stats: Counter = Counter()
    out: list[dict] = []
    for i in range(len(lines) - 1):
        a, p = lines[i], lines[i + 1]
        if a.meeting != p.meeting:
            continue
        stats["adjacent pairs"] += 1
        if a.speaker != p.speaker:
            stats["other speaker"] += 1
            continue
        cos_pos = float(unit[i] @ unit[i + 1])
        if cos_pos < config.pos_threshold:
            stats["positive below threshold"] += 1
            continue
        split = splits[a.meeting]
        pool = pools[split]
        neg, cos_neg = -1, 1.0
        for _ in range(config.max_draws):
            j = int(pool[rng.integers(len(pool))])
            if lines[j].meeting == a.meeting:
                continue
            c = float(unit[i] @ unit[j])
            if c <= config.neg_threshold:
                neg, cos_neg = j, c
                break
        if neg < 0:
            stats["no negative found"] += 1
            continue
        stats[f"triplets {split}"] += 1
        out.append({"anchor": a.text, "positive": p.text, "negative": lines[neg].text, "split": split,
                    "meeting": a.meeting, "date": a.date, "speaker": a.speaker,
                    "negative_meeting": lines[neg].meeting, "cos_pos": round(cos_pos, 4),
                    "cos_neg": round(cos_neg, 4)})
    return out, stats


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
    for s in SPLITS:
        write_jsonl(out / f"{s}.jsonl", [t for t in triplets if t["split"] == s])
    counts = {"meetings": len({m.id for m in meetings}), "utterances": sum(len(m.utterances) for m in meetings),
              "lines": len(lines), **{f"meetings {s}": sum(1 for v in splits.values() if v == s) for s in SPLITS},
              **dict(stats), "triplets": len(triplets)}
    return {"counts": counts, "config": config.__dict__ | {"model": model},
            "seconds": {"clean": round(t_clean, 2), "embed": round(t_embed, 2), "total": round(t_total, 2)}}
