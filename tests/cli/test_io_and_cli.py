"""Foundation CLI and readers: real encodes through `argsim embed`, one-line errors, atomic writes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from argsim.cli.app import app
from argsim.errors import InputError
from argsim.io import atomic_path, read_records, read_texts, write_json
from argsim.schemas import text_records

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, ["--quiet", *args])


def test_help_lists_every_group():
    result = invoke("--help")
    assert result.exit_code == 0
    for group in ("embed", "data", "train", "rank", "cluster", "summarize", "eval"):
        assert group in result.output


def test_command_listing_flows_each_summary_as_one_paragraph():
    """A command whose docstring's first paragraph spans lines is listed as flowing text (no break where the
    source line ended): at 300 columns every summary fits on its row."""
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "300"}, terminal_width=300)
    panel = result.output.split("─ Commands ─")[1]
    rows = [line for line in panel.splitlines() if line.startswith("│ ")]
    named = {line.split()[1] for line in rows if line[2] != " "}
    assert {"distill", "evaluate", "embed-import"} <= named
    assert all(line[2] != " " for line in rows), [line for line in rows if line[2] == " "]


def test_embed_csv_jsonl_and_text_agree(tmp_path, minilm):
    texts = ["We should ban whaling.", "Whaling is a tradition."]
    (tmp_path / "a.csv").write_text("id,body\n1,We should ban whaling.\n2,Whaling is a tradition.\n")
    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"body": t}) + "\n" for t in texts))
    (tmp_path / "a.txt").write_text("\n".join(texts) + "\n")
    outs = []
    for name in ("a.csv", "a.jsonl", "a.txt"):
        out = tmp_path / f"{name}.npy"
        result = invoke("embed", str(tmp_path / name), "--column", "body", "--out", str(out))
        assert result.exit_code == 0, result.output
        outs.append(np.load(out))
    np.testing.assert_allclose(outs[0], minilm.encode(texts), atol=1e-5)
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], outs[2])


@pytest.mark.parametrize("content,args,message", [
    (None, [], "file not found"),
    ("id,body\n1,fine\n", ["--column", "text"], "missing column(s) text"),
    ("id,text\n1,fine\n2,\n", [], "row 3, column 'text': empty value"),
    ("id,text\n1,fine\n2,too,many\n", [], "row 3: expected 2 fields, found 3"),
    (b"id,text\n1,caf\xe9\n", [], "not valid UTF-8"),
])
def test_bad_input_is_one_line_exit_2(tmp_path, content, args, message):
    path = tmp_path / "in.csv"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    result = invoke("embed", str(path), "--out", str(tmp_path / "v.npy"), *args)
    assert result.exit_code == 2
    assert message in result.output and str(path) in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "v.npy").exists()


def test_unknown_model_is_one_line_exit_2(tmp_path):
    (tmp_path / "t.txt").write_text("hello\n")
    result = invoke("embed", str(tmp_path / "t.txt"), "--model", "bert-huge", "--out", str(tmp_path / "v.npy"))
    assert result.exit_code == 2 and "unknown model 'bert-huge'" in result.output


def test_malformed_jsonl_names_the_line(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"text": "ok"}\n{"text": broken\n')
    with pytest.raises(InputError, match=r"x.jsonl, row 2: malformed JSON line"):
        read_records(path, text_records("text"))


def test_plain_text_rejects_blank_lines_inside(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("one\n\nthree\n")
    with pytest.raises(InputError, match="row 2: empty text"):
        read_texts(path)



def test_a_file_of_classic_mac_line_ends_is_one_text_and_says_so(tmp_path, capsys):
    """Lines end at LF (CRLF too); a file whose lines end at CR alone is one text, with one warning per read."""
    from argsim.io import count_texts

    path = tmp_path / "mac.txt"
    path.write_bytes(b"alpha\rbeta\rgamma\r")
    assert read_texts(path) == ["alpha\rbeta\rgamma"]  # the final CR dropped, as before an LF
    assert count_texts(path) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("1 text(s) hold a carriage return that ends no line" in line for line in err)
    path.write_bytes(b"alpha\r\nbeta\r\n")
    assert read_texts(path) == ["alpha", "beta"] and count_texts(path) == 2
    assert capsys.readouterr().err == ""

def test_atomic_write_keeps_old_file_on_failure(tmp_path):
    target = tmp_path / "out.json"
    write_json(target, {"v": 1})
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text('{"v": 2, "half')
            raise RuntimeError("interrupted")
    assert json.loads(target.read_text()) == {"v": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_data_check_explains_a_wrong_layout(tmp_path):
    (tmp_path / "argkp").mkdir()
    result = runner.invoke(app, ["--data-dir", str(tmp_path), "data", "check", "argkp"])
    assert result.exit_code == 2 and "layout incomplete, missing" in result.output
    assert "arguments_train.csv" in result.output and "Traceback" not in result.output


def test_demo_matches_the_obvious_key_points():
    from argsim.demo import match_examples

    best = {m.arg_id: m.key_point for m in match_examples()}
    assert best["a3"] == "Regulation threatens free speech"
    assert best["a7"] == "Social media harms young people"
    assert best["a5"] == "Social media spreads misinformation"
    result = invoke("demo")
    assert result.exit_code == 0 and "argsim demo" in result.output


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_csv_or_jsonl_file_is_embedded_in_chunks_never_read_whole(tmp_path, monkeypatch, suffix):
    """CSV / JSONL -> .npy and -> a shard folder stream like plain text: every record is checked first, holding one
    chunk (a bad record in the last row is refused, naming file, row and column, before the model loads), then
    the texts are read and encoded one chunk at a time; the file is never read into memory whole."""
    import argsim.api.encode as encode_module
    import argsim.backend
    import argsim.io
    from argsim.engine.embedding import EmbedSpec, embed_local, read_shards

    class Rows:  # an encoder whose vector of "text i" is (i, len(chunk))
        name, device, precision, cache_key = "rows", "cpu", "fp32", "rows"
        chunks: list[int] = []

        def for_role(self, role):
            return self

        def encode(self, texts, normalize=False):
            self.chunks.append(len(texts))
            return np.array([[float(t.split()[1]), len(texts)] for t in texts], dtype=np.float32)

    monkeypatch.setattr(encode_module, "STREAM_ROWS", 3)
    monkeypatch.setattr(encode_module, "encoder", lambda *a, **k: Rows())
    path, real = tmp_path / f"t{suffix}", argsim.io.read_text_file
    monkeypatch.setattr(argsim.io, "read_text_file",
                        lambda p: pytest.fail("the whole file was read") if p == path else real(p))

    def write(cells: list[str]) -> None:
        if suffix == ".csv":
            path.write_bytes(("\ufeffid,text\r\n" + "".join(f"r{i},{c}\r\n" for i, c in enumerate(cells))).encode())
        else:
            path.write_text("".join(json.dumps({"id": f"r{i}", "text": c}) + "\n" for i, c in enumerate(cells)))

    write([f"text {i}" for i in range(8)])
    result = encode_module.embed_file(path, tmp_path / "v.npy", EmbedSpec())
    assert result.texts == 8 and Rows.chunks == [3, 3, 2]
    assert np.load(tmp_path / "v.npy")[:, 0].tolist() == list(range(8))
    Rows.chunks.clear()
    monkeypatch.setattr(argsim.backend, "get_encoder", lambda *a, **k: Rows())
    embed_local(path, tmp_path / "shards", EmbedSpec(id_column="id"), rows_per_shard=3)
    ids, _keys, vectors, manifest = read_shards(tmp_path / "shards")
    assert Rows.chunks == [3, 3, 2] and manifest["rows"] == 8 and ids == [f"r{i}" for i in range(8)]
    assert vectors[:, 0].tolist() == list(range(8))
    write([f"text {i}" for i in range(7)] + [" "])
    monkeypatch.setattr(encode_module, "encoder", lambda *a, **k: pytest.fail("the model loaded"))
    row = 9 if suffix == ".csv" else 8  # a CSV's header is row 1
    with pytest.raises(InputError, match=rf"t\{suffix}, row {row}, column 'text': .*empty"):
        encode_module.embed_file(path, tmp_path / "w.npy", EmbedSpec())
    assert not (tmp_path / "w.npy").exists()


def test_a_plain_text_file_is_embedded_into_npy_in_chunks_never_read_whole(tmp_path, monkeypatch):
    """Texts -> .npy streams: every line is checked first (a blank line inside is refused before the model loads),
    then the texts are read and encoded one chunk at a time, and the file is never read into memory whole."""
    import argsim.api.encode as encode_module
    import argsim.io
    from argsim.engine.embedding import EmbedSpec

    class Rows:  # an encoder whose vector of "text i" is (i, len(chunk))
        name, device, precision = "rows", "cpu", "fp32"
        chunks: list[int] = []

        def encode(self, texts, normalize=False):
            self.chunks.append(len(texts))
            return np.array([[float(t.split()[1]), len(texts)] for t in texts], dtype=np.float32)

    monkeypatch.setattr(encode_module, "STREAM_ROWS", 3)
    monkeypatch.setattr(encode_module, "encoder", lambda *a, **k: Rows())
    monkeypatch.setattr(argsim.io, "read_text_file", lambda *a: pytest.fail("the whole file was read"))
    path = tmp_path / "t.txt"
    path.write_bytes(b"\xef\xbb\xbf" + "".join(f"text {i}\r\n" for i in range(8)).encode() + b"\n\n")
    result = encode_module.embed_file(path, tmp_path / "v.npy", EmbedSpec())
    assert result.texts == 8 and Rows.chunks == [3, 3, 2]
    assert np.load(tmp_path / "v.npy")[:, 0].tolist() == list(range(8))
    path.write_text("one\n\nthree\n")
    monkeypatch.setattr(encode_module, "encoder", lambda *a, **k: pytest.fail("the model loaded"))
    with pytest.raises(InputError, match=r"t\.txt, row 2: empty text"):
        encode_module.embed_file(path, tmp_path / "w.npy", EmbedSpec())
    path.write_bytes(b"fine\ncaf\xe9\n")
    with pytest.raises(InputError, match=r"t\.txt, row 2: not valid UTF-8 \(byte 8\)"):
        encode_module.embed_file(path, tmp_path / "w.npy", EmbedSpec())
    assert not (tmp_path / "w.npy").exists()


@pytest.mark.parametrize(("name", "read"), [("texts.txt", "read_text_file"), ("texts.txt", "read_texts"),
                                           ("texts.csv", "read_texts")])
def test_an_io_error_while_reading_is_one_line(tmp_path, monkeypatch, name, read):
    """A file that opens but fails mid-read (EIO: a failing disk, a network mount gone) is one InputError naming
    it, as a file that cannot be opened is, in every reader (whole file, lines, CSV records)."""
    import argsim.io as argsim_io
    from argsim.errors import InputError

    path = tmp_path / name
    path.write_text("text\nalpha\n", encoding="utf-8")

    class Failing:
        def __init__(self, *args, **kwargs) -> None:
            self.fh = open(*args, **kwargs)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self.fh.close()

        def read(self, *args):
            raise OSError(5, "Input/output error")

        def __iter__(self):
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(argsim_io, "open", Failing, raising=False)
    with pytest.raises(InputError, match=rf"{name}: cannot be read \(Input/output error\)"):
        getattr(argsim_io, read)(path)
