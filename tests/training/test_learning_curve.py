"""The learning-curve PNG every training run writes beside its weights (argsim.training.curve): the points it
plots, checked against hand computations, and `argsim models curve` (redraw; bad folder = one line, exit 2)."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from argsim.cli.app import app
from argsim.training.curve import eval_series, loss_points, moving_average
from argsim.training.record import write_records

PNG = b"\x89PNG\r\n\x1a\n"


def test_losses_sit_at_their_logged_steps_or_spread_evenly_over_the_run():
    assert loss_points({"losses": [3, 2, 1], "loss_steps": [10, 20, 25], "steps": 25}) == ([10, 20, 25], [3, 2, 1])
    # not recorded (custom loops): the i-th of n losses at (i + 1) / n of the run
    assert loss_points({"losses": [4, 2], "steps": 100}) == ([50.0, 100.0], [4.0, 2.0])
    assert loss_points({"losses": [4, 2], "loss_steps": [7], "steps": 10}) == ([5.0, 10.0], [4.0, 2.0])
    assert loss_points({"steps": 10}) == ([], [])


def test_moving_average_equals_the_trailing_mean():
    values = list(np.random.default_rng(0).normal(size=50))
    got = moving_average(values, 7)
    want = [float(np.mean(values[max(0, i - 6):i + 1])) for i in range(50)]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_eval_series_keeps_metrics_and_leaves_out_runtimes():
    rows = [{"step": 5, "eval_dev_accuracy": 0.6, "eval_runtime": 1.2, "eval_samples_per_second": 9.0, "epoch": 1.0},
            {"step": 10, "eval_dev_accuracy": 0.7}, {"eval_dev_accuracy": 0.9}]  # no step: not plottable
    assert eval_series({"evals": rows}) == {"eval_dev_accuracy": ([5.0, 10.0], [0.6, 0.7])}


def _config(**extra: object) -> dict:
    return {"trainer": "kpm-sbert", "command": "argsim train sbert", "seed": 13, "device": "cpu", "precision": "fp32",
            "processes": 1, "steps": 60, "seconds": 90.0, "losses": [float(60 - i) for i in range(60)],
            "metrics": {"dev_strict_map": 0.81}, **extra}


def test_every_run_draws_its_curve_but_a_trainer_with_its_own_history_keeps_its_png(tmp_path):
    write_records(tmp_path / "a", _config(evals=[{"step": 30, "eval_x": 0.5}, {"step": 60, "eval_x": 0.7}]))
    assert (tmp_path / "a" / "learning_curve.png").read_bytes()[:8] == PNG
    own = tmp_path / "counter"
    own.mkdir()
    (own / "history.json").write_text(json.dumps({"history": [{"epoch": 0, "val": 0.2, "loss": None}]}))
    (own / "learning_curve.png").write_bytes(b"drawn by the counter trainer")
    write_records(own, _config())
    assert (own / "learning_curve.png").read_bytes() == b"drawn by the counter trainer"
    write_records(tmp_path / "silent", _config(losses=[]))  # nothing logged: no empty plot
    assert not (tmp_path / "silent" / "learning_curve.png").exists()


def test_models_curve_redraws_and_refuses_a_folder_argsim_did_not_train(tmp_path):
    write_records(tmp_path / "m", _config())
    (tmp_path / "m" / "learning_curve.png").unlink()
    res = CliRunner().invoke(app, ["models", "curve", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "m" / "learning_curve.png").read_bytes()[:8] == PNG
    res = CliRunner().invoke(app, ["models", "curve", str(tmp_path)])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1 and "train_config.json" in res.output
