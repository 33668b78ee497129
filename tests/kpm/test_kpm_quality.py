"""Key point matching beyond SBERT, on tiny real slices of ArgKP with the real MiniLM: a cross-encoder learns and
reloads to identical scores, `rank keypoints` scores cross-encoder folders and weighted ensembles, the z-score
combination equals a hand computation, MNRL rows hold true hard negatives, MTS starts from an SBERT folder, and
`models build` resumes (a finished recipe is skipped by its records, an interrupted one gets --resume)."""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import replace

import numpy as np
import pytest
import torch

from argsim.data.argkp import KPMData, load_argkp
from tests.conftest import parse_command_line


def _cut(data: KPMData, n: int, name: str) -> KPMData:
    labels = dict(list(data.labels.items())[:n])
    ids = {a for a, _ in labels}
    return KPMData(name, [a for a in data.arguments if a.arg_id in ids], data.key_points, labels)


@pytest.fixture(scope="module")
def tiny(data_dir):
    train = load_argkp("train", data_dir)
    held = _cut(train.subset([train.topics[4]]), 60, "tiny-held")
    return _cut(train.subset([train.topics[1]]), 192, "tiny-train"), held


def _balanced(data: KPMData, n: int) -> KPMData:
    """n matching and n non-matching labelled pairs (so the label prior alone teaches nothing)."""
    pos = [p for p, y in data.labels.items() if y == 1][:n]
    neg = [p for p, y in data.labels.items() if y == 0][:n]
    labels = {p: data.labels[p] for p in pos + neg}
    ids = {a for a, _ in labels}
    return KPMData("balanced", [a for a in data.arguments if a.arg_id in ids], data.key_points, labels)


@pytest.fixture(scope="module")
def cross(data_dir, tmp_path_factory):
    """A cross-encoder trained for 12 steps of 16 balanced pairs (2 epochs of 96, lr 2e-4, max length 64) and
    its BCE loss and AUC on those pairs before and after."""
    from sklearn.metrics import log_loss, roc_auc_score

    from argsim.trainers.kpm_cross import CrossConfig, fit_cross, load_cross_encoder, pair_rows

    full = load_argkp("train", data_dir)
    train = _balanced(full.subset([full.topics[1]]), 48)
    rows = pair_rows(train)
    pairs = list(zip(rows["argument"], rows["key_point"], strict=True))
    from argsim.settings import seed_everything

    seed_everything(13)
    fresh = load_cross_encoder("minilm", "cpu", 64, num_labels=1).predict(pairs)
    folder = tmp_path_factory.mktemp("kpm") / "cross"
    cfg = CrossConfig(lr=2e-4, batch_size=16, epochs=2, warmup_ratio=0.0, max_seq_length=64)
    model, info = fit_cross(train, folder, cfg, quiet=True)
    trained = model.predict(pairs)
    before = (log_loss(rows["label"], fresh), roc_auc_score(rows["label"], fresh))
    after = (log_loss(rows["label"], trained), roc_auc_score(rows["label"], trained))
    return folder, model, info, before, after


@pytest.mark.slow  # the module's cross-encoder learns on the real MiniLM: make test-slow
def test_cross_encoder_learns_and_reloads_to_identical_scores(cross, tiny):
    from argsim.backend.resolve import pair_scorer
    from argsim.config import RunConfig
    from argsim.kpm.scoring import cross_predictions, format_argument, is_cross_encoder

    folder, model, info, before, after = cross
    assert info["steps"] == 12 and is_cross_encoder(folder)
    assert after[0] < min(before[0], np.log(2)) - 0.05, (before, after)  # balanced pairs: ln 2 = chance
    assert after[1] > max(before[1], 0.5) + 0.1, (before, after)
    config = json.loads((folder / "train_config.json").read_text())
    assert config["trainer"] == "kpm-cross" and config["optimizer"]["lr"] == 2e-4
    _, held = tiny
    scores = cross_predictions(held, folder, RunConfig(device="cpu", quiet=True))
    a = held.arguments[0]
    kps = held.candidates(a)
    direct = model.predict([(format_argument(a.text, a.topic, a.stance, "none"), k.text) for k in kps])
    assert np.allclose([scores[a.arg_id][k.kp_id] for k in kps], direct, atol=1e-5)
    bf16 = RunConfig(device="cpu", precision="bf16", quiet=True)  # --precision bf16: the cross-encoder in bf16
    half = pair_scorer(folder, bf16)
    assert half.precision == "bf16" and next(half.model.parameters()).dtype == torch.bfloat16
    one = KPMData("one", [a], held.key_points, {p: y for p, y in held.labels.items() if p[0] == a.arg_id})
    half_scores = cross_predictions(one, folder, bf16)  # one argument: bf16 matmuls are slow on CPUs without bf16 units
    assert np.allclose([half_scores[a.arg_id][k.kp_id] for k in kps], direct, atol=0.03)


def test_context_formats_use_the_tokenizers_separator():
    from argsim.kpm.scoring import format_argument

    assert format_argument("x", "T", 1, "topic", "</s>") == "T </s> x"
    assert format_argument("x", "T", -1, "topic-stance") == "T [SEP] con [SEP] x"


@pytest.mark.slow  # the module's cross-encoder learns on the real MiniLM: make test-slow
def test_rank_keypoints_with_a_cross_encoder_and_an_ensemble(cross, tiny, tmp_path):
    from typer.testing import CliRunner

    from argsim.cli.app import app
    from argsim.io import write_csv
    from argsim.kpm.ensemble import combine_predictions, probability_models

    folder = cross[0]
    _, held = tiny
    args_csv, kps_csv = tmp_path / "a.csv", tmp_path / "k.csv"
    write_csv(args_csv, [{"arg_id": a.arg_id, "argument": a.text, "topic": a.topic, "stance": a.stance}
                         for a in held.arguments[:12]])
    write_csv(kps_csv, [{"key_point_id": k.kp_id, "key_point": k.text, "topic": k.topic, "stance": k.stance}
                        for k in held.key_points])
    base = ["--quiet", "rank", "keypoints", "--arguments", str(args_csv), "--key-points", str(kps_csv)]
    runs = {}
    for name, extra in (("cross", ["-m", str(folder)]), ("bi", ["-m", "minilm"]),
                        ("ens", ["-m", "minilm", "-m", str(folder), "--weight", "0.7", "--weight", "0.3"]),
                        ("logit", ["-m", "minilm", "-m", str(folder), "--weight", "0.7", "--weight", "0.3",
                                   "--combine", "zlogit"])):
        res = CliRunner().invoke(app, [*base, *extra, "--out", str(tmp_path / name)])
        assert res.exit_code == 0, res.output
        runs[name] = json.loads((tmp_path / name / "predictions.json").read_text())
    assert len(runs["cross"]) == 12 and all(0 <= s <= 1 for p in runs["cross"].values() for s in p.values())
    expected = combine_predictions([runs["bi"], runs["cross"]], [0.7, 0.3], "zscore")
    assert runs["ens"].keys() == expected.keys()
    for arg_id, kps in expected.items():
        assert np.allclose([runs["ens"][arg_id][k] for k in kps], list(kps.values()), atol=1e-5)
    logit = combine_predictions([runs["bi"], runs["cross"]], [0.7, 0.3], "zlogit", probability_parts=[1])
    flat = [(a, k) for a, kps in logit.items() for k in kps]
    assert np.allclose([runs["logit"][a][k] for a, k in flat], [logit[a][k] for a, k in flat], atol=1e-5)
    assert probability_models(["minilm", str(folder)]) == [1]  # the CLI maps this one to logits
    bad = CliRunner().invoke(app, [*base, "-m", "minilm", "-m", str(folder), "--weight", "1",
                                   "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2 and "one per model" in bad.output


def test_zscore_combination_equals_a_hand_computation():
    from argsim.kpm.ensemble import combine_predictions

    a = {"x": {"k1": 1.0, "k2": 3.0}, "y": {"k3": 2.0}}  # mean 2, population std sqrt(2/3)
    b = {"x": {"k1": 10.0, "k2": 10.0}, "y": {"k3": 40.0}}  # mean 20, std sqrt(200)
    sa, sb = np.sqrt(2 / 3), np.sqrt(200)
    got = combine_predictions([a, b], [0.7, 0.3], "zscore")
    want = {"x": {"k1": 0.7 * (1 - 2) / sa + 0.3 * (10 - 20) / sb, "k2": 0.7 * (3 - 2) / sa + 0.3 * (10 - 20) / sb},
            "y": {"k3": 0.7 * 0 + 0.3 * (40 - 20) / sb}}
    for arg, kps in want.items():
        assert got[arg] == pytest.approx(kps, abs=1e-6)
    mean = combine_predictions([a, b], [1, 3], "mean")
    assert mean["x"]["k1"] == pytest.approx((1 * 1 + 3 * 10) / 4)
    const = combine_predictions([a, {"x": {"k1": 5.0, "k2": 5.0}, "y": {"k3": 5.0}}], [1, 1], "zscore")
    assert const["x"]["k1"] == pytest.approx((1 - 2) / sa, abs=1e-6)  # a constant model adds nothing


def test_zlogit_standardises_a_probability_model_s_logits():
    from argsim.kpm.ensemble import LOGIT_CLIP, combine_predictions

    cos = {"x": {"k1": 1.0, "k2": 3.0}, "y": {"k3": 2.0}}
    prob = {"x": {"k1": 0.5, "k2": 0.9}, "y": {"k3": 1.0}}  # 1.0 is clipped to 1 - 1e-6
    logits = np.array([0.0, np.log(9.0), np.log((1 - LOGIT_CLIP) / LOGIT_CLIP)])
    z_logit = (logits - logits.mean()) / logits.std()
    z_cos = (np.array([1.0, 3.0, 2.0]) - 2.0) / np.sqrt(2 / 3)
    got = combine_predictions([cos, prob], [0.6, 0.4], "zlogit", probability_parts=[1])
    want = 0.6 * z_cos + 0.4 * z_logit
    assert [got["x"]["k1"], got["x"]["k2"], got["y"]["k3"]] == pytest.approx(list(want), abs=1e-6)
    # without probability models zlogit is zscore
    assert combine_predictions([cos, prob], [0.6, 0.4], "zlogit") == combine_predictions([cos, prob], [0.6, 0.4])


def _fake_cross_folder(path):
    path.mkdir()
    (path / "config_sentence_transformers.json").write_text('{"model_type": "CrossEncoder"}')
    return str(path)


def test_score_models_and_kpm_folds_hand_the_cross_encoder_to_zlogit(monkeypatch, tmp_path):
    """The wiring, not the arithmetic: rank keypoints (score_models) and eval kpm-folds tell zlogit which model
    is the cross-encoder; bimodal probabilities make zlogit and zscore differ."""
    from typer.testing import CliRunner

    import argsim.kpm.ensemble as ensemble
    import argsim.kpm.folds as folds
    from argsim.cli.app import app

    cross = _fake_cross_folder(tmp_path / "ce")
    canned = {"minilm": {"a": {"k1": 0.2, "k2": 0.6}, "b": {"k3": 0.4}},
              cross: {"a": {"k1": 0.97, "k2": 0.02}, "b": {"k3": 0.999}}}
    monkeypatch.setattr(ensemble, "score_model", lambda data, model, *a, **k: canned[model])
    got, _ = ensemble.score_models(None, ["minilm", cross], [0.5, 0.5], "zlogit")
    parts = [canned["minilm"], canned[cross]]
    assert got == ensemble.combine_predictions(parts, [0.5, 0.5], "zlogit", probability_parts=[1])
    assert got != ensemble.combine_predictions(parts, [0.5, 0.5], "zscore")

    seen = {}
    real = folds.rank_candidates

    def spy(*args, **kwargs):
        seen["probability_parts"] = kwargs.get("probability_parts")
        return real(*args, **kwargs)

    monkeypatch.setattr(folds, "rank_candidates", spy)
    def fake_folds(models, train, dev, *a, **k):  # a cosine-like and a bimodal model on the dev pairs
        bi, ce = {}, {}
        for i, ((arg, kp), y) in enumerate(sorted(dev.labels.items())):
            bi.setdefault(arg, {})[kp] = (i % 7) / 7
            ce.setdefault(arg, {})[kp] = 0.97 if y else 0.02
        return [[bi, ce]], [dev]

    monkeypatch.setattr(folds, "score_folds", fake_folds)
    res = CliRunner().invoke(app, ["--quiet", "eval", "kpm-folds", "-m", "minilm", "-m", cross, "--weight", "0.5",
                                   "--weight", "0.5", "--combine", "zlogit", "--fold", "1"])
    assert res.exit_code == 0, res.output
    assert list(seen["probability_parts"]) == [1]


def test_weight_grid_and_fold_selection_prefer_the_better_model(tiny):
    from argsim.kpm.folds import rank_candidates, selection_specs, weight_grid

    assert len(weight_grid(2, 0.1)) == 11 and all(sum(w) == pytest.approx(1) for w in weight_grid(3, 0.25))
    _, held = tiny
    gold = {a: {k: float(v) for (aa, k), v in held.labels.items() if aa == a} for a in {a for a, _ in held.labels}}
    noise = {a: {k: float(np.random.default_rng(len(a) + len(k)).random()) for k in kps} for a, kps in gold.items()}
    ranked = rank_candidates([[gold, noise]], [held], weight_grid(2, 0.5))
    by_weights = {c.weights: c for c in ranked}
    assert ranked[0].mean_strict == pytest.approx(1.0) == by_weights[(1.0, 0.0)].mean_strict
    assert by_weights[(0.0, 1.0)].mean_strict < 1.0 and ranked[-1].weights == (0.0, 1.0)
    both = rank_candidates([[gold, noise]], [held], weight_grid(2, 0.5), ["zscore", "mean"])
    assert len(both) == 6 and {c.combine for c in both} == {"zscore", "mean"}
    from argsim.results import rows_from_specs

    specs = selection_specs(both, ["gold", "noise"], [held], 7)
    rows = {(r.model, r.setting, r.metric): r for r in rows_from_specs(specs)}
    assert rows[("gold", "model alone", "strict_mAP")].value == pytest.approx(1.0)
    assert rows[("noise", "model alone", "strict_mAP")].value == by_weights[(0.0, 1.0)].mean_strict
    best = [r for (m, s, _), r in rows.items() if m == "gold + noise"]
    assert len(best) == 4 and {r.setting.split()[1] for r in best} == {"zscore", "mean"}


def test_mnrl_rows_pair_each_match_with_a_non_matching_key_point_of_its_topic_and_stance(tiny):
    from argsim.trainers.kpm_sbert import mnrl_rows

    train, _ = tiny
    rows = mnrl_rows(train, seed=1)
    by_text = {k.text: k for k in train.key_points}
    args = {a.text: a for a in train.arguments}
    assert len(rows["anchor"]) == train.positives()
    for anchor, pos, neg in zip(rows["anchor"], rows["positive"], rows["negative"], strict=True):
        a, p, n = args[anchor], by_text[pos], by_text[neg]
        assert (n.topic, n.stance) == (a.topic, a.stance) and p.kp_id != n.kp_id
        assert train.labels.get((a.arg_id, n.kp_id), 0) == 0 and train.labels[(a.arg_id, p.kp_id)] == 1


def test_mts_starts_from_a_sentence_transformers_folder(tiny, tmp_path):
    import torch
    from safetensors.torch import load_file

    from argsim.backend import load_sentence_transformer
    from argsim.kpm.mts.config import MTSConfig
    from argsim.trainers.mts import train_mts

    sbert = load_sentence_transformer("minilm", device="cpu")
    emb = sbert[0].auto_model.embeddings.word_embeddings.weight
    with torch.no_grad():
        emb.mul_(1.5)  # a different model than the registry's MiniLM
    sbert.save(str(tmp_path / "sbert"))
    train, _ = tiny
    cfg = MTSConfig(model=str(tmp_path / "sbert"), epochs=1, max_batches=1, max_pos=4, max_neg=4, max_unmatched=1,
                    train_layers=2, pooling="mean", identity_init=True, out_dim=384)
    info = train_mts(train, tmp_path / "mts", cfg, quiet=True)
    assert info["steps"] == 1
    saved = load_file(str(tmp_path / "mts" / "backbone" / "model.safetensors"))
    key = next(k for k in saved if k.endswith("word_embeddings.weight"))
    assert torch.allclose(saved[key], emb.detach())  # the frozen lower part is the SBERT folder's
    from argsim.backend import get_encoder
    from argsim.config import RunConfig

    run = RunConfig(device="cpu", use_cache=False, quiet=True)
    full, half = (get_encoder(str(tmp_path / "mts"), config=replace(run, precision=p)) for p in ("fp32", "bf16"))
    assert half.precision == "bf16" and next(half.net.parameters()).dtype == torch.bfloat16
    a = train.arguments[:3]
    v32, v16 = (e.encode_statements([x.text for x in a], [x.topic for x in a], [x.stance for x in a])
                for e in (full, half))
    cos = (v16 * v32).sum(1) / np.linalg.norm(v16, axis=1) / np.linalg.norm(v32, axis=1)
    assert cos.min() > 0.98 and half.cache_key == full.cache_key + ":bf16"


FAKE_TRAIN = """
import json, pathlib, sys
out = pathlib.Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
with open(out.parent / "calls.txt", "a") as fh: fh.write(" ".join(sys.argv[1:]) + "\\n")
if (out.parent / f"fail-{out.name}").exists(): (out / "checkpoints").mkdir(exist_ok=True); sys.exit(3)
(out / "train_config.json").write_text(json.dumps({"trainer": "fake", "steps": 2, "stopped_by": None,
                                                   "seconds": 123.5, "metrics": {"dev_acc": 0.75}}))
"""


def test_models_build_selects_the_recipes_named_with_all_they_need_in_registry_order():
    from argsim.errors import ArgsimError
    from argsim.modelbuild.recipes import Recipe
    from argsim.modelbuild.runner import select

    recipes = [Recipe(n, "fake", n, f"models/{n}", None, 0.01, 0.01, "test", needs=needs)
               for n, needs in (("a", ()), ("b", ("a",)), ("c", ("b",)), ("d", ()), ("e", ("c", "a")))]
    assert [r.name for r in select(["e"], recipes)] == ["a", "b", "c", "e"]  # transitive, each once
    assert [r.name for r in select(["d", "b"], recipes)] == ["a", "b", "d"]
    assert [r.name for r in select([], recipes)] == ["a", "b", "c", "d", "e"]
    with pytest.raises(ArgsimError, match="unknown recipe 'x'"):
        select(["x"], recipes)


def test_models_build_skips_finished_recipes_and_resumes_interrupted_ones(tmp_path, monkeypatch):
    from argsim.errors import ArgsimError
    from argsim.modelbuild.inventory import trained_models
    from argsim.modelbuild.recipes import Recipe
    from argsim.modelbuild.runner import build, plan

    monkeypatch.chdir(tmp_path)
    script = tmp_path / "fake_train.py"
    script.write_text(FAKE_TRAIN)
    recipes = [Recipe(n, "fake", n, f"models/{n}", f"{sys.executable} {script} models/{n}", 0.01, 0.01, "test",
                      figures={"acc": "train_config.json:metrics.dev_acc"}, method="fake", split="dev")
               for n in ("one", "two")]
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "fail-two").touch()
    with pytest.raises(ArgsimError, match="recipe two"):
        build(plan([], tmp_path, recipes), tmp_path, tmp_path / "build.log", quiet=True, echo=lambda s: None)
    again = plan([], tmp_path, recipes)
    assert again.states == {"one": "finished", "two": "interrupted"}
    (tmp_path / "models" / "fail-two").unlink()
    done = build(again, tmp_path, tmp_path / "build.log", quiet=True, echo=lambda s: None)
    assert [d["status"] for d in done] == ["skipped", "built"] and done[1]["acc"] == 0.75
    calls = (tmp_path / "models" / "calls.txt").read_text().splitlines()
    assert calls == ["models/one", "models/two", "models/two --resume"]  # one ran once; two resumed
    results = json.loads((tmp_path / "bench" / "results" / "fake.json").read_text())
    assert {(r["model"], r["metric"], r["value"]) for r in results["rows"]} == {("models/one", "acc", 0.75),
                                                                               ("models/two", "acc", 0.75)}
    # a row's command is the training command: its seconds are that training run's, not the build's wall time
    assert {r["seconds"] for r in results["rows"]} == {123.5}
    assert [m.folder.name for m in trained_models(tmp_path / "models")] == ["one", "two"]
    assert "two: done" in (tmp_path / "build.log").read_text()


FAKE_BUDGETED_TRAIN = """
import json, pathlib, sys
out = pathlib.Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
with open(out.parent / "calls.txt", "a") as fh: fh.write(" ".join(sys.argv[1:]) + "\\n")
limit = float(sys.argv[sys.argv.index("--max-minutes") + 1]) if "--max-minutes" in sys.argv else None
stopped = "max_minutes" if limit is not None and limit < 5 else None  # the full run needs 5 minutes
if stopped: (out / "checkpoints").mkdir(exist_ok=True)
(out / "train_config.json").write_text(json.dumps({"trainer": "fake", "stopped_by": stopped, "seconds": 1.0,
                                                   "metrics": {"dev_acc": 0.5 if stopped else 0.75}}))
"""


def test_models_build_max_minutes_stops_the_running_recipe_and_the_next_build_resumes_it(tmp_path, monkeypatch):
    from argsim.modelbuild.recipes import Recipe
    from argsim.modelbuild.runner import build, plan, with_budget

    assert with_budget("argsim train x --out m", 3.456) == ("argsim train x --out m --max-minutes 3.46", True)
    assert with_budget("argsim train x --max-minutes 120 --out m", 30) == ("argsim train x --max-minutes 30 --out m",
                                                                          True)
    assert with_budget("argsim train x --max-minutes=2 --out m", 30) == ("argsim train x --max-minutes=2 --out m",
                                                                         False)
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "fake_train.py"
    script.write_text(FAKE_BUDGETED_TRAIN)
    # "own" carries its own 1-minute limit, smaller than the build's: that stop is the recipe's design, so it is
    # scored and finished; "long" is stopped by the build's budget; "later" never starts
    recipes = [Recipe(n, "fake", n, f"models/{n}", f"{sys.executable} {script} models/{n}{extra}", 0.01, 0.01,
                      "test", figures={"acc": "train_config.json:metrics.dev_acc"}, method="fake", split="dev")
               for n, extra in (("own", " --max-minutes 1"), ("long", ""), ("later", ""))]
    (tmp_path / "models").mkdir()
    first = build(plan([], tmp_path, recipes), tmp_path, tmp_path / "build.log", quiet=True, echo=lambda s: None,
                  max_minutes=3)
    assert [d["status"] for d in first] == ["built", "stopped", "pending"]
    assert plan([], tmp_path, recipes).states == {"own": "finished", "long": "interrupted", "later": "new"}
    results = json.loads((tmp_path / "bench" / "results" / "fake.json").read_text())
    assert {r["model"] for r in results["rows"]} == {"models/own"}  # the stopped model's figure is not recorded
    second = build(plan([], tmp_path, recipes), tmp_path, tmp_path / "build.log", quiet=True, echo=lambda s: None)
    assert [d["status"] for d in second] == ["skipped", "built", "built"] and second[1]["acc"] == 0.75
    calls = (tmp_path / "models" / "calls.txt").read_text().splitlines()
    assert calls[0] == "models/own --max-minutes 1"
    assert calls[1].startswith("models/long --max-minutes ") and 2.5 <= float(calls[1].split()[-1]) <= 3
    assert calls[2:] == ["models/long --resume", "models/later"]
    assert "stopped by the build's --max-minutes" in (tmp_path / "build.log").read_text()


def test_every_recipe_command_line_parses_with_the_cli(tmp_path, monkeypatch):
    """A recipe's lines run only in hours-long builds: each must name a real command with real options."""
    from argsim.modelbuild.recipes import RECIPES

    monkeypatch.chdir(tmp_path)
    seen = set()
    for recipe in RECIPES:
        for line in recipe.lines:
            if line:
                seen.add(parse_command_line(line).command_path)
                words = shlex.split(line)  # the folder a line writes exists for the lines after it, as in a build
                for flag, value in zip(words, words[1:], strict=False):
                    if flag in ("--out", "-o"):
                        (tmp_path / value).mkdir(parents=True, exist_ok=True)
    assert {"argsim train thematic", "argsim train bipolar", "argsim rank keypoints"} <= seen
    with pytest.raises(Exception, match="No such option"):
        parse_command_line("argsim train thematic x.jsonl --out m --eval-evry 250")


def test_fold_splits_load_back_and_kpm_folds_scores_fold_one_as_the_dev_split(data_dir, minilm, tmp_path):
    from typer.testing import CliRunner

    from argsim.cli.app import app
    from argsim.kpm.mts.batches import topic_folds
    from argsim.kpm.scoring import score_key_points
    from argsim.metrics.kpa_map import evaluate_map

    train, dev = load_argkp("train", data_dir), load_argkp("dev", data_dir)
    res = CliRunner().invoke(app, ["--quiet", "data", "kpm-folds", "--folds", "2", "--out", str(tmp_path / "f")])
    assert res.exit_code == 0, res.output
    held = load_argkp("fold2-dev", tmp_path / "f")
    want = topic_folds(train, dev, 2)[1][1]
    assert held.labels == want.labels and [a.arg_id for a in held.arguments] == [a.arg_id for a in want.arguments]
    res = CliRunner().invoke(app, ["--quiet", "eval", "kpm-folds", "-m", "minilm", "--fold", "1", "--out",
                                   str(tmp_path / "sel")])
    assert res.exit_code == 0, res.output
    got = json.loads((tmp_path / "sel" / "folds.json").read_text())["candidates"][0]
    assert got["strict"] == [pytest.approx(evaluate_map(score_key_points(dev, minilm), dev).strict)]


def test_cross_encoder_eval_every_keeps_the_best_dev_map_checkpoint(data_dir, tiny_bert, tmp_path):
    """--eval-every 2: the official strict mAP of held-out arguments (same topic, never trained on) is scored every 2
    steps; a tiny random cross-encoder at lr 1e-3 peaks before the last step, and the saved folder is that checkpoint:
    `rank keypoints`' scorer reproduces the best score, and the records name its step."""
    from argsim.config import RunConfig
    from argsim.kpm.scoring import cross_predictions
    from argsim.metrics.kpa_map import evaluate_map
    from argsim.trainers.kpm_cross import SELECTION_METRIC, CrossConfig, train_cross
    from argsim.training import resolve_placement

    full = load_argkp("train", data_dir)
    train = _balanced(full.subset([full.topics[1]]), 48)
    seen = {a.arg_id for a in train.arguments}
    pool = _cut(full.subset([full.topics[1]]), 400, "pool")
    held = KPMData("held", [a for a in pool.arguments if a.arg_id not in seen], pool.key_points,
                   {p: y for p, y in pool.labels.items() if p[0] not in seen})
    cfg = CrossConfig(model=str(tiny_bert), lr=1e-3, batch_size=16, epochs=2, warmup_ratio=0.0, max_seq_length=64,
                      eval_every=2)
    info = train_cross(train, tmp_path / "ce", cfg, placement=resolve_placement("cpu", "fp32", threads=1, seed=13),
                       quiet=True, dev=held)
    scores = {e["step"]: e[SELECTION_METRIC] for e in info["dev"]}
    assert sorted(scores) == [2, 4, 6, 8, 10, 12] and info["steps"] == 12
    best = min(step for step, v in scores.items() if v == max(scores.values()))
    assert info["best_step"] == best < 12 and scores[12] < scores[best], scores
    kept = evaluate_map(cross_predictions(held, tmp_path / "ce", RunConfig(device="cpu", quiet=True)), held)
    assert kept.strict == pytest.approx(scores[best], abs=1e-4)
    metrics = json.loads((tmp_path / "ce" / "train_config.json").read_text())["metrics"]
    assert metrics["best_step"] == best and metrics[SELECTION_METRIC] == pytest.approx(scores[best])
