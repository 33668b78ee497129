"""`argsim bench backends` and its library function: speed-ups and deltas against hand-computed ones, the
thematic slice against the Python API's dataset, and bad options as one line with exit code 2 before any work."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from argsim.benchmarks.backends import TASK_METRICS, speed_and_deltas
from argsim.cli.app import app

runner = CliRunner()


def _figures(tps: dict[int, float], **task: float) -> dict[str, float]:
    return {**{m: 0.7 for m in TASK_METRICS}, **task, **{f"sentences_per_s@{t}": v for t, v in tps.items()}}


def test_speed_ups_compare_best_thread_counts_and_deltas_cover_every_task_figure():
    fp32 = _figures({1: 60.0, 2: 30.0})  # torch slower at 2 threads: its best (60) is the base
    speed, deltas = speed_and_deltas(_figures({1: 200.0, 2: 300.0}), fp32, [1, 2])
    assert speed == pytest.approx(5.0) and set(deltas) == set(TASK_METRICS) and set(deltas.values()) == {0.0}
    speed, deltas = speed_and_deltas(_figures({1: 600.0, 2: 600.0}, minutes_triplet_accuracy=0.69449), fp32, [1, 2])
    assert speed == pytest.approx(10.0) and deltas["minutes_triplet_accuracy"] == -0.0055


def test_thematic_slice_is_the_api_test_split(data_dir, tmp_path):
    """On the first 120 rows of the real article index (a dataset folder of its own: the whole corpus takes the
    API's reference seconds to parse), the slice is the head of the test split `argsim data triplets wikipedia`
    writes (`build_datasets`), built from a few test articles only, and the API's test split is all of it."""
    import csv

    from argsim.api.datasets import load_dataset
    from argsim.data.wikipedia import ROOT, load_articles
    from argsim.io import read_records
    from argsim.schemas import TripletRecord
    from argsim.thematic.build import build_datasets, first_test_triplets

    real, small = data_dir / "wikipedia" / ROOT, tmp_path / "wikipedia" / ROOT
    small.mkdir(parents=True)
    (small / "articles").symlink_to(real / "articles", target_is_directory=True)
    with open(real / "article_info.csv", encoding="utf-8", newline="") as fh:
        lines = fh.read().splitlines(keepends=True)
    (small / "article_info.csv").write_text("".join(lines[:121]), encoding="utf-8")
    with open(small / "article_info.csv", encoding="utf-8", newline="") as fh:
        assert len(list(csv.DictReader(fh))) == 120  # no row spans lines

    ours = first_test_triplets(tmp_path / "wikipedia", 25)
    api = load_dataset("wikipedia-triplets", split="test", data_dir=tmp_path)
    build_datasets(load_articles(tmp_path / "wikipedia", use_cache=False, quiet=True), tmp_path / "built")
    built = [(t["anchor"], t["positive"], t["negative"])
             for t in read_records(tmp_path / "built" / "triplets-sen-test.jsonl", TripletRecord)]
    assert len(ours) == 25 and len(api) > 25 and api["article"].nunique() > len({t["article"] for t in ours})
    assert [(t["anchor"], t["positive"], t["negative"]) for t in ours] == built[:25]
    assert list(zip(api["anchor"], api["positive"], api["negative"], strict=True)) == built


@pytest.mark.parametrize(("argv", "says"), [
    (["--variants", "torch-fp32,lsh"], "--variants: unknown variant(s) lsh"),
    (["--threads", "1,x"], "--threads: '1,x' is not a comma list"),
    (["--threads", "0"], "thread counts >= 1"),
    (["--minutes-dir", "no-such-folder"], "no-such-folder/test.jsonl is missing: run `argsim data triplets minutes"),
])
def test_bad_options_are_one_line_and_exit_2(argv, says, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["bench", "backends", *argv])
    assert res.exit_code == 2, res.output
    assert says in res.output and len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "bench").exists()  # nothing written
