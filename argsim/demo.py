"""The built-in demo: match the example arguments to their key points with the default model, through the same
code as `argsim rank keypoints` (loader, zero-shot scoring, best match), on the demo files that ship inside the
package (`demo_folder`), so it works from any folder after `pip install`."""

from __future__ import annotations

import shutil
import tempfile
from importlib import resources
from pathlib import Path

from argsim.backend import get_encoder
from argsim.backend.names import default_model
from argsim.config import RunConfig
from argsim.data.argkp import kpm_data
from argsim.kpm.scoring import BestMatch, best_matches, score_key_points


def demo_folder() -> Path:
    """The folder of the demo files that ship with argsim (copied to a temporary folder when the package is not
    installed as plain files, e.g. inside a zip).

    Returns:
        A folder holding arguments.csv, key_points.csv and sentences.txt.

    Example:
        >>> sorted(p.name for p in demo_folder().iterdir() if p.suffix in (".csv", ".txt"))
        ['arguments.csv', 'key_points.csv', 'sentences.txt']
    """
    data = resources.files("argsim").joinpath("demo_data")
    if isinstance(data, Path):
        return data
    folder = Path(tempfile.mkdtemp(prefix="argsim-demo-"))
    for name in ("arguments.csv", "key_points.csv", "sentences.txt"):
        with resources.as_file(data.joinpath(name)) as path:
            shutil.copyfile(path, folder / name)
    return folder


def match_examples(folder: Path | None = None, model: str | None = None,
                   config: RunConfig | None = None) -> list[BestMatch]:
    """Each argument's best key point of the same topic and stance, by cosine of backend embeddings.

    Args:
        folder: a folder with arguments.csv and key_points.csv (default: the demo files, `demo_folder()`).
        model: a backend model name or folder; None: the default of `argsim rank keypoints` and `KeyPointMatcher`
            (`argsim.backend.names.default_model`: the shipped key point matcher `kpm`).
        config: the run options; None: the defaults.

    Returns:
        One `BestMatch` per argument; `matched` says whether its score reaches the model's threshold
        (`argsim.kpm.threshold`), else no key point fits it.
    """
    from argsim.kpm.threshold import model_threshold

    folder = demo_folder() if folder is None else folder
    data = kpm_data(folder / "arguments.csv", folder / "key_points.csv", name="demo")
    model = model or default_model("kpm")
    return best_matches(data, score_key_points(data, get_encoder(model, config=config)), model_threshold(model)[0])
