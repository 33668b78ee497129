"""Interrupted work: a real SIGINT (Ctrl-C) to `argsim rank counterargs` running in a subprocess leaves no
partial file, keeps the settings that finished, exits 130 with one line; `--resume` then ranks only the rest.
`eval counter-neural` continues from its finished rows; `embed` and `rank keypoints` from their cached chunks."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from pathlib import Path

from typer.testing import CliRunner

from argsim.cli.app import app
from tests.conftest import signal_at_marker

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "counter_neural" / "02-extracted-arguments"
runner = CliRunner()

# BM25 under another name that stalls in the setting `sda` (after writing a marker), so the interrupt lands there
SLOW_RANKER = """
import sys, time
from pathlib import Path
from argsim.counter.core.registry import register_ranker
from argsim.counter.lexical.baselines import bm25_scores

@register_ranker("bm25-stalling")
def stalling(points, pools, setting=None, marker=None, **_):
    if setting == "sda" and marker:
        Path(marker).write_text("in sda")
        time.sleep(120)
    return bm25_scores(points, pools)
"""


def _tiny_corpus(root: Path) -> Path:
    """The fixture tree laid out as counterargs-18 (its test split; empty training/validation)."""
    base = root / "counterargs18"
    shutil.copytree(FIXTURE, base / "02-extracted-arguments")
    for split in ("training", "validation"):
        (base / "02-extracted-arguments" / split).mkdir()
    counts = base / "03-pairs-best-counter-task" / "test" / "00-argument-pair-type-counts.tsv"
    counts.parent.mkdir(parents=True)
    counts.touch()
    return root


def _interrupted(tmp_path: Path, sig: int) -> tuple[list[str], Path, Path, str]:
    """Run the stalling ranking in a subprocess, send `sig` while it ranks `sda`; (args, data, out, stderr)."""
    data = _tiny_corpus(tmp_path / "data")
    out, marker = tmp_path / "ranking.jsonl", tmp_path / "in-sda"
    args = ["--quiet", "rank", "counterargs", "--method", "bm25-stalling", "-s", "sdoc", "-s", "sda", "-s", "sdc",
            "--out", str(out)]
    code = SLOW_RANKER + "from argsim.cli.app import main\nsys.argv = ['argsim', *sys.argv[1:]]\nmain()\n"
    env = os.environ | {"ARGSIM_DATA": str(data), "PYTHONPATH": str(REPO)}
    returncode, err = signal_at_marker([sys.executable, "-c", code, *args, "--opt", f"marker={marker}"], env,
                                       marker, sig)
    assert returncode == (143 if sig == signal.SIGTERM else 130), err
    return args, data, out, err


def test_sigterm_ends_like_ctrl_c(tmp_path):
    """SIGTERM (a scheduler's stop) runs the same cleanup: exit 143 (128 + SIGTERM), one line, the finished
    setting kept whole."""
    _args, _data, out, err = _interrupted(tmp_path, signal.SIGTERM)
    assert len([ln for ln in err.splitlines() if ln.strip()]) == 1 and "interrupted" in err
    assert {json.loads(line)["setting"] for line in out.read_text().splitlines()} == {"sdoc"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "in-sda", "ranking.jsonl"]


def test_sigint_keeps_finished_settings_and_resume_continues(tmp_path, monkeypatch):
    args, data, out, err = _interrupted(tmp_path, signal.SIGINT)
    assert len([ln for ln in err.splitlines() if ln.strip()]) == 1 and "interrupted" in err and "Traceback" not in err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and {r["setting"] for r in rows} == {"sdoc"}  # the finished setting, whole; nothing of sda
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "in-sda", "ranking.jsonl"]  # no temp file left
    n_sdoc = len(rows)

    # the rerun, in this process, with the same method name (not stalling): sdoc is kept, not ranked again
    exec(compile(SLOW_RANKER, "slow_ranker", "exec"), {})
    from argsim.counter.core import run as run_module

    monkeypatch.setenv("ARGSIM_DATA", str(data))
    real, calls = run_module.run_ranker, []
    monkeypatch.setattr(run_module, "run_ranker", lambda *a, **kw: calls.append(kw["setting"]) or real(*a, **kw))
    result = runner.invoke(app, [*args, "--resume"])
    assert result.exit_code == 0, result.output
    assert calls == ["sda", "sdc"]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["setting"] for r in rows].count("sdoc") == n_sdoc and {r["setting"] for r in rows} == {"sdoc", "sda",
                                                                                                    "sdc"}


def test_counter_neural_table_keeps_finished_rows_and_continues(tmp_path, monkeypatch):
    """`eval counter-neural` (`evaluate_table3` with a state file): a row interrupted (Ctrl-C) keeps the rows that
    finished; the same run again evaluates only the rest, gives the table an uninterrupted run gives and removes
    the state; a run on other inputs is refused in one line while the state is there."""
    import numpy as np
    import pytest

    import argsim.counter.neural.table3 as t3
    from argsim.counter.neural.config import Table3Request
    from argsim.data.counterargs import load_counterargs_folder
    from argsim.errors import ArgsimError

    corpus = load_counterargs_folder(FIXTURE)
    state, calls, real = tmp_path / "runs" / "table.partial.json", [], t3.evaluate_row
    monkeypatch.setattr(t3, "evaluate_row", lambda row, *a, **k: calls.append(row.method) or real(row, *a, **k))

    def ctrl_c(result):
        raise KeyboardInterrupt

    request = Table3Request({}, "test", ("epa",), (5,))
    with pytest.raises(KeyboardInterrupt):
        t3.evaluate_table3(corpus, request, state=state, on_result=ctrl_c)
    assert calls == ["zero-shot cosine (minilm)"] and state.is_file()
    assert [p.name for p in state.parent.iterdir()] == [state.name]  # no temporary file left
    with pytest.raises(ArgsimError, match=r"interrupted run on other inputs \(ks\)"):
        t3.evaluate_table3(corpus, Table3Request({}, "test", ("epa",), (3,)), state=state)
    calls.clear()
    resumed = t3.evaluate_table3(corpus, request, state=state)
    assert calls == ["BM25"] and not state.exists()
    whole = t3.evaluate_table3(corpus, request)
    assert [r.row for r in resumed] == [r.row for r in whole]
    for a, b in zip(resumed, whole, strict=True):
        assert a.score.ids == b.score.ids and a.versus == b.versus
        assert all(np.array_equal(a.score.hits[k], b.score.hits[k]) for k in (1, 5))


# `eval counter-neural` whose second row stalls (after the first row's state is written), so the signal lands there
STALLING_TABLE = """
import sys, time
from pathlib import Path
import argsim.counter.neural.table3 as t3

real, seen, marker = t3.evaluate_row, [], Path(sys.argv.pop())

def stalling(row, *a, **k):
    seen.append(row.method)
    if len(seen) == 2:
        marker.write_text("in row 2")
        time.sleep(120)
    return real(row, *a, **k)

t3.evaluate_row = stalling
from argsim.cli.app import main
sys.argv = ['argsim', *sys.argv[1:]]
main()
"""


def test_sigint_in_eval_counter_neural_exits_130_and_the_rerun_continues(tmp_path, monkeypatch):
    data, work, marker = _tiny_corpus(tmp_path / "data"), tmp_path / "work", tmp_path / "in-row-2"
    args = ["--quiet", "--workdir", str(work), "eval", "counter-neural", "--split", "test", "--settings", "epa",
            "--ks", "5", "--task", "t3"]
    env = os.environ | {"ARGSIM_DATA": str(data), "PYTHONPATH": str(REPO)}
    returncode, err = signal_at_marker([sys.executable, "-c", STALLING_TABLE, *args, str(marker)], env, marker,
                                       signal.SIGINT)
    assert returncode == 130 and len([ln for ln in err.splitlines() if ln.strip()]) == 1, err
    state = work / "runs" / "counter-neural" / "t3.partial.json"
    assert list(json.loads(state.read_text())["rows"]) == ["zero-shot cosine (minilm)|cosine:minilm|None|epa"]
    assert not (work / "bench" / "results" / "t3.json").exists()

    import argsim.counter.neural.table3 as t3

    monkeypatch.setenv("ARGSIM_DATA", str(data))
    real, calls = t3.evaluate_row, []
    monkeypatch.setattr(t3, "evaluate_row", lambda row, *a, **k: calls.append(row.method) or real(row, *a, **k))
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert calls == ["BM25"] and not state.exists()
    rows = json.loads((work / "bench" / "results" / "t3.json").read_text())["rows"]
    assert {r["method"].split(" (")[0] for r in rows} == {"zero-shot cosine", "BM25"}


# the encoder of this process computes in chunks of 4 texts and, once the first chunk is in the cache, writes the
# marker (argv's last item) and stalls: the interrupt lands after one committed chunk
STALLING_ENCODER = """
import sys, time
from pathlib import Path
from argsim.backend.cache import EmbeddingCache
from argsim.backend.encoder import Encoder

marker = Path(sys.argv.pop())
real_compute, real_put = Encoder._compute, EmbeddingCache.put_many
Encoder.chunk_batches = 1
Encoder._compute = lambda self, texts, batch_size, *a, **k: real_compute(self, texts, 4, *a, **k)

def put_many(self, texts, vectors):
    real_put(self, texts, vectors)
    marker.write_text(str(len(texts)))
    time.sleep(120)

EmbeddingCache.put_many = put_many
from argsim.cli.app import main
sys.argv = ['argsim', *sys.argv[1:]]
main()
"""


def _interrupt_and_rerun(tmp_path: Path, monkeypatch, args: list[str]) -> tuple[int, list[int]]:
    """`args` interrupted (SIGINT) after its first chunk of 4 texts is cached, then run again in this process on the
    same cache; (the texts cached before the rerun, the sizes of the text lists the rerun computed)."""
    from argsim.backend.encoder import Encoder

    cache, marker = tmp_path / "cache", tmp_path / "one-chunk-cached"
    argv = ["--quiet", "--cache-dir", str(cache), *args]
    env = os.environ | {"PYTHONPATH": str(REPO)}
    returncode, err = signal_at_marker([sys.executable, "-c", STALLING_ENCODER, *argv, str(marker)], env, marker,
                                       signal.SIGINT)
    assert returncode == 130 and len([ln for ln in err.splitlines() if ln.strip()]) == 1, err
    assert "Traceback" not in err and marker.read_text() == "4"
    real, computed = Encoder._compute, []
    monkeypatch.setattr(Encoder, "_compute", lambda self, texts, *a, **k: computed.append(len(texts))
                        or real(self, texts, *a, **k))
    result = runner.invoke(app, argv)
    assert result.exit_code == 0, result.output
    return 4, computed


def test_sigint_in_embed_then_the_rerun_embeds_only_the_rest(tmp_path, monkeypatch):
    """`argsim embed` stopped by Ctrl-C after one chunk: exit 130, one line, no output or temporary file; the same
    command again computes only the texts not cached and writes what an uninterrupted run writes."""
    import numpy as np

    texts = tmp_path / "texts.txt"
    texts.write_text("".join(f"argument number {i} about school uniforms\n" for i in range(14)), encoding="utf-8")
    out = tmp_path / "vectors.npy"
    cached, computed = _interrupt_and_rerun(tmp_path, monkeypatch, ["embed", str(texts), "--model", "minilm",
                                                                    "--out", str(out)])
    assert sum(computed) == 14 - cached  # the finished chunk is not computed again
    whole = tmp_path / "whole.npy"
    result = runner.invoke(app, ["--quiet", "--no-cache", "embed", str(texts), "--model", "minilm", "--out",
                                 str(whole)])
    assert result.exit_code == 0, result.output
    assert np.allclose(np.load(out), np.load(whole), atol=1e-5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "one-chunk-cached", "texts.txt", "vectors.npy",
                                                          "whole.npy"]


def test_sigint_in_rank_keypoints_then_the_rerun_embeds_only_the_rest(tmp_path, monkeypatch):
    """`argsim rank keypoints` stopped by Ctrl-C after one chunk of its texts: exit 130, one line, no predictions;
    the same command again embeds only the texts not cached and writes the predictions of an uninterrupted run."""
    kpm = REPO / "tests" / "fixtures" / "kpm"
    files = ["--arguments", str(kpm / "arguments.csv"), "--key-points", str(kpm / "key_points.csv")]
    out = tmp_path / "ranked"
    cached, computed = _interrupt_and_rerun(tmp_path, monkeypatch, ["rank", "keypoints", *files, "--model",
                                                                    "minilm", "--out", str(out)])
    assert sum(computed) == 12 + 4 - cached  # 12 arguments and 4 key points, less the finished chunk
    whole = tmp_path / "whole"
    result = runner.invoke(app, ["--quiet", "--no-cache", "rank", "keypoints", *files, "--model", "minilm",
                                 "--out", str(whole)])
    assert result.exit_code == 0, result.output
    resumed, fresh = (json.loads((d / "predictions.json").read_text()) for d in (out, whole))
    assert resumed.keys() == fresh.keys()
    for arg, scores in fresh.items():
        assert resumed[arg].keys() == scores.keys()
        assert all(abs(resumed[arg][k] - v) < 1e-5 for k, v in scores.items())


def test_sigint_in_rank_keypoints_with_a_cross_encoder_then_the_rerun_scores_only_the_rest(tmp_path, monkeypatch,
                                                                                           tiny_bert):
    """`argsim rank keypoints` with a cross-encoder stopped by Ctrl-C after one chunk of its pairs: exit 130, one
    line, no output folder; the same command again scores only the pairs not cached (their logits are kept in the
    embedding cache under the model's fingerprint) and writes the predictions of an uninterrupted run, exactly."""
    from sentence_transformers import CrossEncoder

    from argsim.backend import registry
    from argsim.backend.encoder import Encoder
    from argsim.kpm.scoring import CROSS_INFO

    model = tmp_path / "cross"
    CrossEncoder(str(tiny_bert), num_labels=1, max_length=64, device="cpu").save(str(model))
    (model / CROSS_INFO).write_text(json.dumps({"context": "topic", "sep": "[SEP]", "max_length": 64}))
    kpm = REPO / "tests" / "fixtures" / "kpm"
    files = ["--arguments", str(kpm / "arguments.csv"), "--key-points", str(kpm / "key_points.csv")]
    n_pairs = 6 * 2 + 4 * 1 + 2 * 1  # the 12 arguments, each with the key points of its topic and stance
    out = tmp_path / "ranked"
    real = Encoder._compute  # the child's chunks (4 pairs) here too, so that the runs score in the same batches
    monkeypatch.setattr(Encoder, "chunk_batches", 1)
    monkeypatch.setattr(Encoder, "_compute", lambda self, texts, batch_size, *a, **k: real(self, texts, 4, *a, **k))
    cached, computed = _interrupt_and_rerun(tmp_path, monkeypatch, ["rank", "keypoints", *files, "--model",
                                                                    str(model), "--out", str(out)])
    assert sum(computed) == n_pairs - cached and len(computed) == 1  # only the pairs not scored before the stop
    monkeypatch.setattr(registry, "_LOADED", {})
    whole = tmp_path / "whole"
    result = runner.invoke(app, ["--quiet", "--no-cache", "rank", "keypoints", *files, "--model", str(model),
                                 "--out", str(whole)])
    assert result.exit_code == 0, result.output
    resumed, fresh = (json.loads((d / "predictions.json").read_text()) for d in (out, whole))
    assert sum(len(kps) for kps in fresh.values()) == n_pairs and resumed == fresh
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "cross", "one-chunk-cached", "ranked", "whole"]
