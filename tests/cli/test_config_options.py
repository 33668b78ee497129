"""One source for every setting: the train commands' options are the config dataclasses' fields, the recommended
recipes are presets over them, and with no option a train command trains its recipe."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path

import pytest
from typer.main import get_command

from argsim.cli.app import app
from argsim.counter.lexical.feature_config import FeatureConfig
from argsim.counter.neural.config import NeuralConfig
from argsim.kpm.mts.config import MTSConfig
from argsim.minutes.mining import MiningConfig
from argsim.modelbuild.recipes import RECIPES, Step
from argsim.options import config_argv, is_option, option_name, setting
from argsim.thematic.config import ThematicTrainConfig
from argsim.trainers.kpm_cross import CrossConfig
from argsim.trainers.kpm_sbert import SbertConfig
from argsim.trainers.minutes_sbert import MinutesTrainConfig
from tests.conftest import parse_command_line as parse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "kpm"
COMMANDS = {"train sbert": SbertConfig, "train kpm-cross": CrossConfig, "train mts": MTSConfig,
            "train bipolar": NeuralConfig, "train thematic": ThematicTrainConfig,
            "train minutes-sbert": MinutesTrainConfig, "data triplets minutes": MiningConfig,
            "train ltr": FeatureConfig}
RECIPE = {r.name: r for r in RECIPES}


def option_values(ctx, cls: type) -> dict:
    return {f.name: ctx.params[f.name] for f in fields(cls) if is_option(f) and f.name in ctx.params}


def test_config_argv_writes_only_the_changed_fields_and_flags_booleans():
    @dataclass
    class Demo:
        lr: float = setting(2e-5, "Learning rate.")
        encoder: bool = setting(False, "Train it.", option="--train-encoder/--frozen-encoder")
        tags: list = setting([], "Tags.")
        seed: int = setting(13, "Seed.", cli=False)

    assert config_argv(Demo()) == []
    assert config_argv(Demo(lr=1e-3, encoder=True, tags=["a", "b"])) == ["--lr", "0.001", "--train-encoder", "--tags",
                                                                       "a", "--tags", "b"]
    with pytest.raises(ValueError, match="seed is no command-line option"):
        config_argv(Demo(seed=1))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_config_field_is_an_option_of_its_command_with_the_same_default(command, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    cls = COMMANDS[command]
    extra = " x.jsonl --out m" if command == "train thematic" else " --out m"
    ctx = parse(f"argsim {command}{extra}")
    want = {f.name: getattr(cls(), f.name) for f in fields(cls) if is_option(f) and f.name != "out_dim"}
    assert {k: v for k, v in option_values(ctx, cls).items() if k != "out_dim"} == want
    cmd = get_command(app)
    for part in command.split():
        cmd = cmd.commands[part]
    names = {n for p in cmd.params for n in p.opts + p.secondary_opts}
    assert {option_name(f).split("/")[0] for f in fields(cls) if is_option(f)} <= names


def test_the_recommended_recipes_are_the_defaults():
    """`argsim train sbert` with no option trains what `models build kpm-sbert` trains (and so on)."""
    assert RECIPE["kpm-sbert"].train.config == SbertConfig()
    assert (SbertConfig().loss, SbertConfig().lr, SbertConfig().lr_end) == ("contrastive", 2e-5, 0.0)
    assert RECIPE["kpm-cross"].train.config == CrossConfig() and CrossConfig().epochs == 3
    assert RECIPE["minutes-sbert"].train.config == MinutesTrainConfig()
    assert (MinutesTrainConfig().lr, MinutesTrainConfig().distance, MinutesTrainConfig().margin) == (1e-3, "cosine",
                                                                                                    0.5)
    assert RECIPE["thematic-lora"].train.config == ThematicTrainConfig()
    shipped = ThematicTrainConfig().resolved()  # the shipped `thematic` adapter's run (docs/models.md)
    assert (shipped.arch, shipped.lora_rank, shipped.lr, shipped.margin, shipped.batch_size, shipped.eval_every) == (
        "minilm", 16, 1e-4, 0.3, 16, 250)
    paper = RECIPE["thematic-bilstm"].train.config.resolved()  # the paper's BiLSTM, one option away
    assert RECIPE["thematic-bilstm"].train.config == ThematicTrainConfig(arch="bilstm")
    assert (paper.lr, paper.batch_size, paper.lora_rank, paper.epochs) == (1e-3, 64, 0, 1)
    assert RECIPE["counter-bi-encoder"].train.config == NeuralConfig(kind="bi-encoder")
    line = "argsim train sbert --checkpoint-every 200 --out models/kpm-sbert-contrastive"
    assert RECIPE["kpm-sbert"].train_line == line


def test_train_thematic_with_no_option_trains_the_shipped_recipe_and_bilstm_the_papers(tmp_path, monkeypatch):
    """`argsim train thematic T --out M` fine-tunes the shipped recipe (LoRA r=16 over MiniLM, lr 1e-4, margin 0.3,
    batch 16; with --dev the best of evaluations every 250 steps, without it nothing is scored); `--arch bilstm`
    trains the paper's BiLSTM with the paper's values (Adam 1e-3, batch 64); a value given wins."""
    from typer.testing import CliRunner

    import argsim.trainers.thematic_bilstm as bilstm
    import argsim.trainers.thematic_minilm as finetune

    seen: dict = {}

    def fake_finetune(rows, out, config, **kw):
        seen["minilm"] = {**vars(config), **kw}
        raise SystemExit(0)

    def fake_bilstm(rows, out, cfg, **kw):
        seen["bilstm"] = cfg.resolved("bilstm", has_dev=kw["dev"] is not None)
        raise SystemExit(0)

    monkeypatch.setattr(finetune, "finetune_sentence_transformer", fake_finetune)
    monkeypatch.setattr(bilstm, "train_bilstm", fake_bilstm)
    trips = str(Path(__file__).resolve().parents[2] / "examples" / "thematic" / "triplets.jsonl")

    def run(*extra: str) -> None:
        seen.clear()
        res = CliRunner().invoke(app, ["train", "thematic", trips, "--out", str(tmp_path / "m"), *extra])
        assert res.exit_code == 0, res.output

    run("--dev", trips)
    kw = seen["minilm"]
    assert (kw["lora_rank"], kw["lr"], kw["margin"], kw["batch_size"], kw["eval_every"], kw["model"]) == (
        16, 1e-4, 0.3, 16, 250, "minilm")
    run()
    assert seen["minilm"]["eval_every"] == 0 and seen["minilm"]["dev"] is None  # no --dev: nothing to score
    run("--lora-rank", "0", "--lr", "2e-5")
    assert (seen["minilm"]["lora_rank"], seen["minilm"]["lr"], seen["minilm"]["batch_size"]) == (0, 2e-5, 16)
    run("--arch", "bilstm", "--dev", trips)
    paper = seen["bilstm"]
    assert (paper.arch, paper.lr, paper.batch_size, paper.lora_rank, paper.eval_every) == ("bilstm", 1e-3, 64, 0, 0)
    run("--arch", "bilstm", "--batch-size", "8")
    assert (seen["bilstm"].lr, seen["bilstm"].batch_size) == (1e-3, 8)
    bad = CliRunner().invoke(app, ["train", "thematic", trips, "--out", str(tmp_path / "n"), "--dev", trips,
                                   "--checkpoint-every", "100"])
    assert bad.exit_code == 2 and "--eval-every 250" in bad.output and not (tmp_path / "n").exists()
    helps = {p.name: p.help for p in get_command(app).commands["train"].commands["thematic"].params}
    assert "minilm 0.0001, bilstm 0.001" in helps["lr"] and "minilm 16, bilstm 64" in helps["batch_size"]
    assert "minilm 16, bilstm 0" in helps["lora_rank"] and "minilm 250, bilstm 0" in helps["eval_every"]


@pytest.mark.parametrize("recipe", [r for r in RECIPES if isinstance(r.train, Step) and r.train.config is not None],
                         ids=lambda r: r.name)
def test_a_recipe_line_parses_back_to_its_preset(recipe, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = recipe.train.config
    ctx = parse(recipe.train_line)
    assert option_values(ctx, type(config)) == {f.name: getattr(config, f.name) for f in fields(config)
                                                if is_option(f)}


def test_old_spellings_still_set_the_field(tmp_path, monkeypatch):
    """--max-length (train kpm-cross), --base-model (train bipolar) and --backbone (train minutes-sbert) are hidden
    aliases of --max-seq-length and --model."""
    from typer.testing import CliRunner

    import argsim.trainers.kpm_cross as cross

    seen = {}

    def fake_train(data, out, cfg, **_):
        seen["cfg"] = cfg
        raise SystemExit(0)

    monkeypatch.setattr(cross, "train_cross", fake_train)
    monkeypatch.chdir(tmp_path)
    files = ["--arguments", str(FIXTURES / "arguments.csv"), "--key-points", str(FIXTURES / "key_points.csv"),
             "--labels", str(FIXTURES / "labels.csv")]
    res = CliRunner().invoke(app, ["--seed", "7", "train", "kpm-cross", *files, "--max-length", "32",
                                   "--eval-split", "", "--out", "m"])
    assert res.exit_code == 0, res.output
    assert seen["cfg"] == CrossConfig(max_seq_length=32, seed=7)
    help_text = CliRunner().invoke(app, ["train", "kpm-cross", "--help"], terminal_width=200).output
    assert "--max-seq-length" in help_text and "--max-length" not in help_text
    assert parse("argsim train bipolar --base-model mpnet --out m").params["base_model__alias0"] == "mpnet"
    assert parse("argsim train minutes-sbert --backbone minilm").params["backbone__alias0"] == "minilm"


def _commands(group, path=()):
    for name, cmd in getattr(group, "commands", {}).items():
        yield (*path, name), cmd
        yield from _commands(cmd, (*path, name))


def test_one_name_per_concept_across_commands():
    """A model is `--model` and a token limit `--max-seq-length` in every command; the older spellings are
    accepted but hidden."""
    old = {"--base-model", "--backbone", "--bert-model", "--max-length", "--max-len", "--statement-max-len"}
    shown = [(" ".join(path), opt) for path, cmd in _commands(get_command(app)) for p in cmd.params
             if not getattr(p, "hidden", False) for opt in p.opts if opt in old]
    assert shown == []
    assert parse("argsim eval counter-neural --base-model mpnet").params["base_model_alias"] == "mpnet"
    assert parse("argsim train ltr --bert-model mpnet").params["bert_model__alias0"] == "mpnet"


def test_no_flag_reads_as_a_double_negative():
    """A boolean whose name already says "no" is one flag (`--no-limit`), never `--no-limit / --no-no-limit`."""
    doubled = [(" ".join(path), opt) for path, cmd in _commands(get_command(app)) for p in cmd.params
               for opt in [*p.opts, *getattr(p, "secondary_opts", [])] if opt.startswith("--no-no-")]
    assert doubled == []
    flag = next(p for p in get_command(app).commands["eval"].commands["rouge"].params if p.name == "no_limit")
    assert flag.opts == ["--no-limit"] and not flag.secondary_opts


@pytest.mark.parametrize("module", ["argsim.options", "argsim.config", "argsim.demo", "argsim.trainers.kpm_sbert",
                                    "argsim.trainers.kpm_cross", "argsim.kpm.mts.config",
                                    "argsim.counter.neural.config", "argsim.thematic.config",
                                    "argsim.trainers.minutes_sbert", "argsim.minutes.mining",
                                    "argsim.counter.lexical.feature_config", "argsim.modelbuild.recipes"])
def test_docstring_examples_of_the_settings_run(module):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_mts_folders_saved_with_the_older_token_limit_names_load(tmp_path):
    import json

    from argsim.kpm.mts.config import CONFIG_FILE

    (tmp_path / CONFIG_FILE).write_text(json.dumps({"statement_max_len": 40, "topic_max_len": 20, "pooling": "mean"}))
    loaded = MTSConfig.load(tmp_path)
    assert (loaded.max_seq_length, loaded.topic_max_seq_length, loaded.pooling) == (40, 20, "mean")
    MTSConfig(max_seq_length=12).save(tmp_path)
    assert MTSConfig.load(tmp_path) == MTSConfig(max_seq_length=12)


def test_lr_end_equal_to_lr_is_a_constant_rate_and_above_it_is_refused_before_work(tmp_path):
    """The help's promise: --lr-end = --lr keeps the rate constant (transformers' polynomial schedule raises on
    it); an end rate above the start is one line and exit 2 before any data is read."""
    from typer.testing import CliRunner

    from argsim.training.policy import OptimPolicy

    assert OptimPolicy(lr=1e-4, lr_end=1e-4).trainer_kwargs()["lr_scheduler_type"] == "constant_with_warmup"
    assert OptimPolicy(lr=1e-4, lr_end=1e-5).trainer_kwargs()["lr_scheduler_type"] == "polynomial"
    res = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "absent"), "train", "sbert", "--lr", "1e-5",
                                   "--lr-end", "1e-4", "--out", str(tmp_path / "m")])
    assert res.exit_code == 2 and "--lr-end" in res.output and not (tmp_path / "m").exists()
