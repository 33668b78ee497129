"""`train_bipolar`: train any kind of the neural counter-argument models (Shi, Cao and Nguyen, "Revisiting the Role
of Similarity and Dissimilarity in Best Counter Argument Retrieval", arXiv 2023) on `PairData`: `counter_models.train`
or, for kind `cross-encoder`, `counter_cross.train_cross_encoder`, then `learning_curve.png` beside the model."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from argsim.counter.neural.config import NeuralConfig
from argsim.counter.neural.data import PairData
from argsim.errors import ArgsimError
from argsim.options import setting


@dataclass(frozen=True)
class CrossValidation:
    """The cross-encoder's validation: `points` questions (a point, its counter, `negatives` random candidates)
    asked `evals` times per epoch (the bi-encoders: accuracy@1/K, `NeuralConfig.k_val`)."""

    points: int = setting(100, "Cross-encoder validation: questions (validation points, each with its counter and "
                               "random negatives).", min=1, option="--cross-val-points")
    negatives: int = setting(4, "Cross-encoder validation: random negatives per question.", min=0,
                             option="--cross-val-negatives")
    evals: int = setting(4, "Cross-encoder validations per epoch.", min=1, option="--cross-evals")


def check_init(config: NeuralConfig, init: str | Path | None) -> None:
    """Refuse, one line and before any model or data is loaded, `train_layers` for the cross-encoder (it fine-tunes
    every layer) or over a frozen encoder, `init` for the cross-encoder (it starts from `config.base_model`; `init`
    starts heads) and an `init` that is no trained counter model of `config.kind`."""
    if config.train_layers and config.kind == "cross-encoder":
        raise ArgsimError("--train-layers picks the towers' layers of a Bi-, Unipolar- or Bipolar-encoder; a "
                          "cross-encoder fine-tunes every layer: drop it")
    if config.train_layers and not config.train_encoder:
        raise ArgsimError("--train-layers fine-tunes the encoder's top layers: add --train-encoder")
    if init is None:
        return
    if config.kind == "cross-encoder":
        raise ArgsimError("--init starts the heads of a Bi-, Unipolar- or Bipolar-encoder; a cross-encoder starts "
                          "from --model (a cross-encoder folder or a base model)")
    from argsim.counter.neural.store import model_files, read_config, trained_folder

    with model_files(folder := trained_folder(init), "counter-argument model"):  # config.json only, no weights
        kind = read_config(folder)[0].kind
    if kind != config.kind:
        raise ArgsimError(f"--init {init}: a {kind} model cannot initialise a {config.kind} model (--kind {kind})")


def train_bipolar(config: NeuralConfig, data: PairData, out: str | Path, *, init: str | Path | None = None,
                  cross: CrossValidation = CrossValidation(), placement=None, budget=None, quiet: bool = True,
                  log: Callable[[dict], None] | None = None) -> list[dict]:
    """Train `config.kind` on `data` into `out` and plot its learning curve (`out/learning_curve.png`, rank 0).

    Args:
        config: The model and its training (`NeuralConfig`); the seed is `placement`'s when one is given.
        data: Training and validation pairs (`PairSource.load`). init: A trained model whose heads (and LoRA
            adapters) start the training. cross: The cross-encoder's validation. placement, budget: device /
            precision / seed and the stops (`argsim.training`). quiet: no progress bars. log: gets every history row.

    Returns:
        The history: one row per validation (epoch 0 = untrained; `val` = the validation figure, `seconds`).

    Example:
        >>> history = train_bipolar(NeuralConfig(kind="bi-encoder", epochs=3), data, "models/bi")  # doctest: +SKIP
    """
    from argsim.counter.neural.store import learning_curves
    from argsim.training import is_main_process

    check_init(config, init)
    if len(data.train_collection) < 3:  # a pair's negative is another text of the training collection
        raise ArgsimError(f"{data.info.get('train_file', 'the training pairs')}: {len(data.train_pairs)} pair(s) with "
                          f"{len(data.train_collection)} distinct texts; a pair's negative is another of them, so at "
                          "least 3 are needed")
    seed = placement.seed if placement is not None else config.seed
    config = replace(config, seed=seed)  # the caller's config stays as given
    if config.kind == "cross-encoder":
        from argsim.trainers.counter_cross import train_cross_encoder, validation_choices

        texts = data.texts
        questions = validation_choices([(texts[p], texts[c]) for p, c in data.val_pairs],
                                       [texts[i] for i in data.val_collection], points=cross.points,
                                       negatives=cross.negatives, seed=seed)
        history = train_cross_encoder(config, [(texts[p], texts[c]) for p, c in data.train_pairs],
                                      [texts[i] for i in data.train_collection], out, questions=questions, log=log,
                                      evals_per_epoch=cross.evals, placement=placement, budget=budget, quiet=quiet)
        title = f"cross-encoder: validation accuracy@1 among 1 + {cross.negatives}"
    else:
        from argsim.trainers.counter_models import train

        history = train(config, data, out, log=log, init=init, placement=placement, budget=budget)
        title = f"{config.kind}: validation accuracy@1/{config.k_val}"
    if is_main_process():
        learning_curves({config.kind: history}, Path(out) / "learning_curve.png", title=title)
    return history
