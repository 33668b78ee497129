"""Simple-SD weight mapping, exact pruning, LTR and end-to-end ranking on small slices of counterargs-18."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from argsim.cli.app import app
from argsim.counter.core.run import dataset_points
from argsim.counter.lexical.features import FEATURE_NAMES, FeatureConfig, FeatureSpace
from argsim.counter.lexical.prune import linear_scores
from argsim.counter.lexical.simplesd import READINGS, resolve_weights
from argsim.data.counterargs import build_pools
from argsim.errors import ArgsimError
from argsim.metrics.ranking import accuracy_at_1, mrr


@pytest.fixture(scope="module")
def corpus(counterargs_corpus):
    return counterargs_corpus


def _slice(corpus, setting, n, split="test"):
    points = corpus.points(split)[:: max(1, len(corpus.points(split)) // n)][:n]
    pools = build_pools(corpus, split, setting)
    return points, {p.id: pools[p.id] for p in points}, {p.id: corpus.true_counter(p).id for p in points}


def test_simple_sd_weight_mapping():
    w = dict(zip(FEATURE_NAMES, READINGS["literal"], strict=False))
    assert (w["manhattan-min"], w["manhattan-max"], w["manhattan-sum"], w["wmd-sum"]) == (-0.1, -0.1, 0.9, 0.9)
    assert np.count_nonzero(READINGS["literal"]) == 4
    # literal reading collapses: min + max = sum, so it equals 0.8 man-sum + 0.9 wmd-sum on any features
    rng = np.random.default_rng(0)
    cl, pr = rng.random((2, 50)), rng.random((2, 50))
    from argsim.counter.lexical.features import aggregate

    x = np.concatenate([aggregate(cl[0], pr[0]), aggregate(cl[1], pr[1])], axis=1)
    assert x @ READINGS["literal"] == pytest.approx(0.8 * (cl[0] + pr[0]) + 0.9 * (cl[1] + pr[1]))
    # max-min keeps a dissimilarity term: a negative coefficient on the less similar part
    mm = dict(zip(FEATURE_NAMES, READINGS["max-min"], strict=False))
    assert mm["manhattan-max"] == mm["wmd-max"] == 0.9 and mm["manhattan-min"] == mm["wmd-min"] == -0.1
    assert x @ READINGS["max-min"] == pytest.approx(0.9 * np.maximum(cl[0], pr[0]) - 0.1 * np.minimum(cl[0], pr[0])
                                                    + 0.9 * np.maximum(cl[1], pr[1]) - 0.1 * np.minimum(cl[1], pr[1]))
    assert resolve_weights(weights=[0, 0, 0, 1, 0, 0, 0, 1]).tolist() == [0, 0, 0, 1, 0, 0, 0, 1]
    with pytest.raises(ArgsimError, match="8 weights"):
        resolve_weights(weights=[1, 2])
    with pytest.raises(ArgsimError, match="finite"):
        resolve_weights(weights=[float("nan")] + [1.0] * 7)


def test_simple_sd_study_compares_readings_and_tuning_only_improves(corpus, data_dir, tmp_path):
    from argsim.counter.lexical.simplesd import study_readings, study_row_specs
    from argsim.results import rows_from_specs

    report = study_readings("validation", ["sdoc"], limit=10, tune=True, seed=3, data_dir=data_dir,
                            cache_dir=tmp_path)
    accs = report["readings"]["sdoc"]
    assert accs["points"] == 10 and set(READINGS) <= set(accs)
    tuned = report["tuned"]
    assert tuned["setting"] == "sdoc" and tuned["start"] == max(READINGS, key=lambda n: accs[n])
    assert tuned["accuracy"] >= accs[tuned["start"]] and report["weights"] == tuned["weights"]
    # the tuned weights score what the report says on the same points
    points, pools, gold = dataset_points("validation", "sdoc", sample=10, seed=3, data_dir=data_dir)
    scores, _ = linear_scores(FeatureSpace(points, pools, FeatureConfig()), np.array(tuned["weights"]),
                              mode="none", description=None)
    assert accuracy_at_1({p.id: ([c.id for c in pools[p.id]], scores[p.id]) for p in points}, gold) == \
        pytest.approx(tuned["accuracy"])
    rows = rows_from_specs(study_row_specs(report))
    assert [r.method for r in rows] == [f"simple-sd[{n}]" for n in READINGS] + ["simple-sd[tuned]"]


def test_pruned_ranking_equals_exact(corpus):
    points, pools, gold = _slice(corpus, "sda", 12)
    space = FeatureSpace(points, pools, FeatureConfig())
    w = READINGS["max-min"]
    exact, st_none = linear_scores(space, w, mode="none", description=None)
    ranked, st_rank = linear_scores(space, w, gold=gold, mode="rank", description=None)
    top, st_top = linear_scores(space, w, mode="top", top_k=1, description=None)
    ids = {p.id: [c.id for c in pools[p.id]] for p in points}
    acc = accuracy_at_1({k: (ids[k], v) for k, v in exact.items()}, gold)
    assert acc == accuracy_at_1({k: (ids[k], v) for k, v in ranked.items()}, gold)
    assert acc == accuracy_at_1({k: (ids[k], v) for k, v in top.items()}, gold)
    assert mrr({k: (ids[k], v) for k, v in exact.items()}, gold) == mrr({k: (ids[k], v) for k, v in ranked.items()},
                                                                         gold)
    for pid in exact:  # pruned scores are upper bounds, the best is exact
        assert np.all(top[pid] >= exact[pid] - 1e-9)
        assert top[pid].max() == exact[pid].max()
    assert st_top.solved_pr < st_none.solved_pr
    # features of the exact path agree with the pruned scorer's exact scores
    feats = space.features(8)
    for pid in exact:
        assert feats[pid] @ w == pytest.approx(exact[pid], abs=1e-12)
    # negative WMD weights (as logistic regression learns them) prune through the WMD upper bounds, still exact
    w_neg = np.array([-0.1, -0.1, 0.0, 0.9, -0.3, 0.0, -0.2, 0.9])
    exact, st_none = linear_scores(space, w_neg, mode="none", description=None)
    top, st_top = linear_scores(space, w_neg, mode="top", top_k=1, description=None)
    assert accuracy_at_1({k: (ids[k], v) for k, v in exact.items()}, gold) == accuracy_at_1(
        {k: (ids[k], v) for k, v in top.items()}, gold)
    for pid in exact:
        assert np.all(top[pid] >= exact[pid] - 1e-9) and top[pid].max() == pytest.approx(exact[pid].max(), abs=1e-9)
    assert st_top.solved_pr < st_none.solved_pr


def test_cli_simple_sd_beats_random_and_eval_reads_it(corpus, tmp_path):
    out = tmp_path / "rank.jsonl"
    res = CliRunner().invoke(app, ["--quiet", "rank", "counterargs", "--method", "simple-sd", "-s", "sdoc", "--limit",
                                   "60", "--opt", "prune=rank", "--out", str(out)])
    assert res.exit_code == 0, res.output
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(recs) == 60 and all(r["gold"] and r["top"] for r in recs)
    acc = np.mean([1 / (r["gold_tied"] + 1) if r["gold_better"] == 0 else 0 for r in recs])
    assert acc > np.mean([1 / r["pool_size"] for r in recs]) + 0.15
    res = CliRunner().invoke(app, ["--quiet", "eval", "counterargs", str(out)])
    assert res.exit_code == 0 and f"{acc:.3f}" in res.output and "0.745" in res.output


def test_an_unknown_prune_mode_is_refused_in_one_line(tmp_path):
    """`--opt prune=...` of simple-sd is checked as the LTR rankers check it (it fell back to `top` silently)."""
    out = tmp_path / "rank.jsonl"
    res = CliRunner().invoke(app, ["--quiet", "rank", "counterargs", "--method", "simple-sd", "--limit", "5",
                                   "--opt", "prune=exact", "--out", str(out)])
    assert res.exit_code == 2 and "unknown simple-sd prune mode 'exact'" in res.output and not out.exists()


def test_ltr_trains_and_ranks_better_than_random(corpus, tmp_path):
    from argsim.counter.ltr.model import LTRModel
    from argsim.counter.ltr.training import train_ltr

    saved = train_ltr(corpus, "sdoc", ("logreg-part", "xgboost-part"), FeatureConfig(), neg_per_point=3,
                      out_dir=tmp_path, limit=120)
    model, meta = LTRModel.load(saved["logreg-part"])
    assert meta["sampling"]["points"] == 120 and meta["sampling"]["positives"] == 120
    assert model.linear_weights().shape == (8,)
    points, pools, gold = _slice(corpus, "sdoc", 60)
    from argsim.counter.core.registry import get_ranker

    for method in ("logreg-part", "xgboost-part"):
        scores = get_ranker(method).fn(points, pools, model=str(saved[method]))
        acc = accuracy_at_1({p.id: ([c.id for c in pools[p.id]], scores[p.id]) for p in points}, gold)
        assert acc > np.mean([1 / len(v) for v in pools.values()]) + 0.15, method


def test_user_file_ranking_and_bad_input(tmp_path):
    out = tmp_path / "u.jsonl"
    res = CliRunner().invoke(app, ["--quiet", "rank", "counterargs", "-i", "examples/counter/arguments.jsonl",
                                   "--method", "simple-sd", "--candidates", "counters", "--out", str(out)])
    assert res.exit_code == 0, res.output
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(recs) == 6 and sum(r["gold_better"] == 0 for r in recs) >= 4
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "x", "kind": "point", "counter": "zz"}\n')
    res = CliRunner().invoke(app, ["--quiet", "rank", "counterargs", "-i", str(bad), "--out", str(out)])
    assert res.exit_code == 2 and "zz" in res.output
