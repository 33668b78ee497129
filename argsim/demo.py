"""The built-in demo: match the example arguments to their key points with the default model."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from argsim.backend import DEFAULT_MODEL, get_encoder
from argsim.io import read_records

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "demo"


@dataclass(frozen=True)
class Match:
    arg_id: str
    argument: str
    key_point: str
    score: float


def match_examples(folder: Path = EXAMPLES, model: str = DEFAULT_MODEL) -> list[Match]:
    """Each argument's best key point of the same topic and stance, by cosine of backend embeddings."""
    args = read_records(folder / "arguments.csv", required=["arg_id", "argument", "topic", "stance"])
    kps = read_records(folder / "key_points.csv", required=["key_point_id", "key_point", "topic", "stance"])
    enc = get_encoder(model)
    a_vec = enc.encode([a["argument"] for a in args], normalize=True)
    k_vec = enc.encode([k["key_point"] for k in kps], normalize=True)
    sims = a_vec @ k_vec.T
    matches = []
    for i, a in enumerate(args):
        same = np.array([(k["topic"], k["stance"]) == (a["topic"], a["stance"]) for k in kps])
        if not same.any():
            continue
        j = int(np.argmax(np.where(same, sims[i], -np.inf)))
        matches.append(Match(a["arg_id"], a["argument"], kps[j]["key_point"], float(sims[i, j])))
    return matches
