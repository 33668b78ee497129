"""The recommended model of each task as a recipe: presets over the trainers' config dataclasses.

A recipe's steps are argsim commands (`Step`); a train step's command line is built from a preset of its config
dataclass (`argsim.options.config_argv`: only the fields that differ from the defaults become options, so a
recipe whose preset is the default trains what the command trains with no option). `prepare` builds data once
(skipped when `creates` exists), `train` trains into `out` (resumable), `score` lines run after training (eval
commands that merge their rows into bench/results themselves). `figures` name where the figure the model reached
is read, {row metric: "file-in-out:dotted.key"}: the build writes them as bench/results/<task>.json rows.

`cpu_minutes`: the wall time on 2 CPU cores, measured where `basis` says so, else a measured step cost times the
steps; `gpu_minutes`: ESTIMATED for one H100-class GPU from the same step costs (transformer steps taken as 25x
faster than on the 2 cores, the word-vector/BiLSTM ones 10x; no GPU measured it).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any

from argsim.counter.neural.config import NeuralConfig
from argsim.options import config_argv
from argsim.thematic.config import ThematicTrainConfig
from argsim.trainers.kpm_cross import CrossConfig
from argsim.trainers.kpm_sbert import SbertConfig
from argsim.trainers.minutes_sbert import MinutesTrainConfig


@dataclass(frozen=True)
class Step:
    """One argsim command: `command` ("train sbert"), a `config` preset (its non-default fields become options),
    positional `args` and other `options` ((flag, value) pairs in order; True: a bare flag).

    Example:
        >>> Step("train kpm-cross", CrossConfig(epochs=1), options=(("--out", "models/x"),)).line
        'argsim train kpm-cross --epochs 1 --out models/x'
    """

    command: str
    config: Any = None
    args: tuple[str, ...] = ()
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def line(self) -> str:
        parts = ["argsim", *self.command.split(), *self.args]
        if self.config is not None:
            parts += config_argv(self.config)
        for flag, value in self.options:
            parts += [flag] if value is True else [flag, str(value)]
        return shlex.join(parts)


def step(command: str, config: Any = None, *args: str, **options: Any) -> Step:
    """A `Step` whose options are keyword arguments (`checkpoint_every=200` -> `--checkpoint-every 200`; a list
    value repeats the option)."""
    pairs = (("--" + name.replace("_", "-"), v) for name, value in options.items()
             for v in (value if isinstance(value, list) else [value]))
    return Step(command, config, tuple(args), tuple(pairs))


def line(command: Step | str) -> str:
    """A step's command line (a string is one already)."""
    return command if isinstance(command, str) else command.line


@dataclass(frozen=True)
class Recipe:
    name: str
    task: str  # bench/results/<task>.json
    description: str
    out: str
    train: Step | str | None  # the training command (None for a score-only recipe)
    cpu_minutes: float
    gpu_minutes: float
    basis: str
    prepare: tuple[tuple[Step | str, str], ...] = ()  # (command, path it creates)
    score: tuple[Step | str, ...] = ()
    figures: dict[str, str] = field(default_factory=dict)
    method: str = ""
    setting: str = ""
    split: str = ""
    needs: tuple[str, ...] = ()  # recipes whose models this one uses

    @property
    def train_line(self) -> str:
        """The training command line ("" when the recipe trains nothing)."""
        return line(self.train) if self.train else ""

    @property
    def lines(self) -> list[str]:
        """Every command line in the order the build runs them."""
        return ([line(c) for c, _ in self.prepare] + ([self.train_line] if self.train else [])
                + [line(c) for c in self.score])


KPM_SBERT = "models/kpm-sbert-contrastive"
KPM_CROSS = "models/kpm-cross"
KPM_LORA = "models/kpm-lora"
THEMATIC_DATA = "runs/thematic/data"
MINUTES_DATA = "runs/minutes-triplets"


#: where a key point matcher trained on ArgKP train records the dev mAPs it reached
KPM_FIGURES = {"strict_map": "train_config.json:metrics.dev_strict_map",
               "relaxed_map": "train_config.json:metrics.dev_relaxed_map"}


def thematic_recipe(name: str, description: str, out: str, config: ThematicTrainConfig, checkpoint_every: int,
                    cpu_minutes: float, gpu_minutes: float, basis: str, setting: str, distance: str | None = None,
                    accuracy_key: str = "dev_triplet_accuracy") -> Recipe:
    """A thematic encoder trained on the Wikipedia sentence triplets (built once), scored on their test split:
    `config` the network and its settings, `distance` the test's distance (None: the eval's default), `setting`
    the result rows' setting."""
    data = THEMATIC_DATA
    train = step("train thematic", config, f"{data}/triplets-sen-train.jsonl", out=out,
                 dev=f"{data}/triplets-sen-dev.jsonl", checkpoint_every=checkpoint_every)
    score = step("eval triplets", None, f"{data}/triplets-sen-test.jsonl", model=out,
                 **({"distance": distance} if distance else {}), task="thematic")
    prepare = step("data triplets wikipedia", out=data)
    return Recipe(name, "thematic", description, out, train, cpu_minutes=cpu_minutes, gpu_minutes=gpu_minutes,
                  basis=basis, prepare=((prepare, f"{data}/triplets-sen-train.jsonl"),), score=(score,),
                  figures={"dev_accuracy": f"train_config.json:metrics.{accuracy_key}"}, method=name,
                  setting=setting, split="triplets-sen-dev")


def minutes_recipe(name: str, description: str, out: str, config: MinutesTrainConfig, cpu_minutes: float,
                   gpu_minutes: float, basis: str, setting: str) -> Recipe:
    """A political SBERT trained on the minutes triplets (mined once), scored on their test split; its training
    run records the dev accuracy it reached."""
    return Recipe(name, "minutes", description, out,
                  step("train minutes-sbert", config, checkpoint_every=500, out=out), cpu_minutes=cpu_minutes,
                  gpu_minutes=gpu_minutes, basis=basis,
                  prepare=((step("data triplets minutes", out=MINUTES_DATA), f"{MINUTES_DATA}/train.jsonl"),),
                  score=(step("eval triplets", None, f"{MINUTES_DATA}/test.jsonl", model=out, task="minutes"),),
                  figures={"dev_accuracy": "train_config.json:metrics.eval_dev_cosine_accuracy"}, method=name,
                  setting=setting, split="dev")


BIPOLAR_RANDOM = "models/counter_neural/bipolar-random"
BIPOLAR_LORA = "models/counter_neural/bipolar-lora"
BI_ENCODER = "models/counter_neural/bi-encoder-200"

RECIPES: tuple[Recipe, ...] = (
    Recipe("kpm-sbert", "kpm", "key point matching: contrastive Siamese SBERT (MiniLM), 1 epoch", KPM_SBERT,
           step("train sbert", SbertConfig(), checkpoint_every=200, out=KPM_SBERT),
           cpu_minutes=22, gpu_minutes=1, figures=KPM_FIGURES, split="dev",
           basis="measured: 1,290 steps in 21 min on 2 CPU cores (150 steps in 146 s)",
           method="sbert-contrastive", setting="all layers, ContrastiveLoss, 1 epoch (models build)"),
    Recipe("kpm-lora", "kpm", "key point matching: LoRA adapter (r=16) over MiniLM, contrastive, 301 steps (the "
           "shipped `kpm`: `argsim models publish kpm models/kpm-lora` after it)", KPM_LORA,
           step("train sbert", SbertConfig(lora_rank=16, lr=2e-4, lr_end=0.0, epochs=0.2326), checkpoint_every=100,
                out=KPM_LORA),
           cpu_minutes=4.5, gpu_minutes=0.5, figures=KPM_FIGURES, split="dev",
           basis="measured: 301 steps in 258 s on 2 idle CPU cores with 1 torch thread (the row's env holds the "
                 "conditions)", method="sbert-lora",
           setting="LoRA r=16 alpha 32, ContrastiveLoss, lr 2e-4 -> 0, 301 steps x 16 (models build)"),
    Recipe("kpm-cross", "kpm", "key point matching: MiniLM cross-encoder, BCE, 3 epochs", KPM_CROSS,
           step("train kpm-cross", CrossConfig(), checkpoint_every=200, out=KPM_CROSS),
           cpu_minutes=45, gpu_minutes=2, figures=KPM_FIGURES, split="dev",
           basis="measured: 3,870 steps (3 epochs) in 44.8 min on 2 CPU cores",
           method="cross-encoder", setting="MiniLM, BCE, lr 2e-5, batch 16, max length 96, 3 epochs"),
    Recipe("kpm-ensemble", "kpm", "key point matching: z-score ensemble 0.7 SBERT + 0.3 cross-encoder logits",
           "runs/kpm-ensemble",
           step("rank keypoints", model=[KPM_SBERT, KPM_CROSS], weight=[0.7, 0.3], combine="zlogit",
                out="runs/kpm-ensemble"),
           cpu_minutes=1, gpu_minutes=0.1,
           basis="measured: dev (932 arguments) scored by both models, 52 s with start-up",
           figures={"strict_map": "metrics.json:map.leaderboard.strict",
                    "relaxed_map": "metrics.json:map.leaderboard.relaxed"},
           method="ensemble (z-score)", setting="0.7 contrastive SBERT + 0.3 cross-encoder (its logits)",
           split="dev", needs=("kpm-sbert", "kpm-cross")),
    Recipe("counter-bipolar", "counterargs-neural", "counter-argument: Bipolar-encoder, a LoRA adapter (r=16) over "
           "MiniLM trained with its heads (the shipped `counter-bipolar`: `argsim models publish counter-bipolar "
           "models/counter_neural/bipolar-lora` after it)", BIPOLAR_LORA,
           step("train bipolar", NeuralConfig(kind="bipolar", train_encoder=True, lora_rank=16, lora_alpha=32.0,
                                              sampling="random", lr=1e-4, cls_lr=1e-4, encoder_lr=2e-4,
                                              batch_size=32, epochs=5, patience=2),
                init=BIPOLAR_RANDOM, max_minutes=45, out=BIPOLAR_LORA),
           cpu_minutes=100, gpu_minutes=6,
           basis="measured: 2 epochs of 128 steps of 32 pairs (--max-minutes 45 ends the run after the epoch that "
                 "crosses it) in 93 min of training on 2 CPU cores (the validation row's env holds the "
                 "conditions), after the 6-minute frozen-encoder heads; scoring 2 min",
           prepare=((step("train bipolar", NeuralConfig(kind="bipolar", sampling="random", lr=1e-3, epochs=40,
                                                        patience=10),
                          max_minutes=6, out=BIPOLAR_RANDOM), BIPOLAR_RANDOM),),
           score=(step("eval counter-neural", bipolar=BIPOLAR_LORA, split="test", settings="epa",
                       bipolar_settings="sdoc,sda,epc"),),
           figures={"accuracy@1/30": "train_config.json:metrics.val_at1_over_30_best"},
           method="Bipolar-encoder", setting="LoRA r=16 tower and heads, best epoch on validation (models build)",
           split="validation"),
    Recipe("counter-bi-encoder", "counterargs-neural",
           "counter-argument: Bi-encoder (frozen MiniLM, two adapters, increasing-hard negatives) to convergence",
           BI_ENCODER,
           step("train bipolar", NeuralConfig(kind="bi-encoder"), out=BI_ENCODER),
           cpu_minutes=16, gpu_minutes=2,
           basis="measured: embedding the training texts once took ~12 min on 2 CPU cores (a 40-epoch run, 12.7 "
                 "min in all), then 100 epochs (best 80 on validation, early stop after 20 more) in 2.1 min; "
                 "scoring the 4 test settings 2 min",
           score=(step("eval counter-neural", bi_encoder=BI_ENCODER, split="test", settings="sdoc,sda,epc,epa"),),
           figures={"accuracy@1/30": "train_config.json:metrics.val_at1_over_30_best"},
           method="Bi-encoder", setting="frozen MiniLM, increasing-hard, best epoch on validation (models build)",
           split="validation"),
    thematic_recipe("thematic-bilstm", "thematic similarity: BiLSTM triplet network, 1 full epoch",
                    "models/thematic-sen-full", ThematicTrainConfig(arch="bilstm"), checkpoint_every=100,
                    cpu_minutes=26, gpu_minutes=3,
                    basis="measured: 1,034 steps of 64 triplets in 24.5 min on 1 thread (an upper bound), 25.4 min "
                          "with the scoring",
                    distance="l1", accuracy_key="dev_triplet_accuracy_l1", setting="--epochs 1 --checkpoint-every 100"),
    thematic_recipe("thematic-minilm", "thematic similarity: MiniLM fine-tune on all training triplets",
                    "models/thematic-minilm-full",
                    ThematicTrainConfig(lr=2e-5, lora_rank=0, threads=2), checkpoint_every=500,
                    cpu_minutes=125, gpu_minutes=5,
                    basis="estimated from a measured step cost: 375 steps of 16 triplets took 707 s on 2 CPU cores "
                          "with a 1,000-triplet dev evaluation every 75 steps, so 4,135 steps ~2 h; the best of its "
                          "2,000-triplet dev evaluations every 250 steps is kept; margin 0.3 (375 steps gave test "
                          "0.7320 with 0.3 against 0.6852 with 1.0)",
                    setting="--eval-every 250 --checkpoint-every 500"),
    thematic_recipe("thematic-lora", "thematic similarity: LoRA adapter (r=16) over MiniLM, triplet loss, best of "
                    "its dev evaluations (the shipped `thematic`: `argsim models publish thematic "
                    "models/thematic-lora` after it)", "models/thematic-lora",
                    ThematicTrainConfig(), checkpoint_every=250, cpu_minutes=125, gpu_minutes=5.5,
                    basis="measured: on one NVIDIA H200, 2,038 of the epoch's 4,135 steps of 16 triplets in 205 s "
                          "with a 2,000-triplet dev evaluation every 250 steps (the shipped adapter: that run "
                          "stopped by --max-minutes 3.4 and kept its best step, 1,500); on 2 CPU cores the full "
                          "fine-tune's steps took 1.7 s, so the epoch ~2 h",
                    setting="LoRA r=16 alpha 32, TripletLoss margin 0.3, lr 1e-4, --eval-every 250"),
    minutes_recipe("minutes-sbert", "minutes: political SBERT on all mined training triplets, 3 epochs",
                   "models/minutes-sbert-full", MinutesTrainConfig(), cpu_minutes=10, gpu_minutes=2,
                   basis="measured: 7,902 steps of 16 (42,130 triplets x 3 epochs) in 7.6 min on 2 CPU cores, 9.6 "
                         "min with the scoring",
                   setting="all mined training triplets, 3 epochs, cosine distance, margin 0.5"),
    minutes_recipe("minutes-sbert-words", "minutes: the shipped political SBERT (`minutes`): the recipe above with "
                   "own vectors for the words seen twice in training", "models/minutes-sbert-words",
                   MinutesTrainConfig(word_min_count=2), cpu_minutes=24, gpu_minutes=4,
                   basis="measured: 7,902 steps of 16 (42,130 triplets x 3 epochs) with 19,630 own word vectors in "
                         "21.6 min on 2 idle CPU cores",
                   setting="all mined training triplets, own vectors for words seen twice, 3 epochs, cosine, margin "
                           "0.5"),
)

