"""The built-in demo: match the example arguments to their key points with the default model.

It runs the same code as `argsim rank keypoints` (loader, zero-shot scoring, best match), on examples/demo.
"""

from __future__ import annotations

from pathlib import Path

from argsim.backend import DEFAULT_MODEL, get_encoder
from argsim.data.argkp import load_kpm_files
from argsim.kpm.scoring import BestMatch, best_matches, score_key_points

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "demo"


def match_examples(folder: Path = EXAMPLES, model: str = DEFAULT_MODEL) -> list[BestMatch]:
    """Each argument's best key point of the same topic and stance, by cosine of backend embeddings."""
    data = load_kpm_files(folder / "arguments.csv", folder / "key_points.csv", name="demo")
    return best_matches(data, score_key_points(data, get_encoder(model)))
