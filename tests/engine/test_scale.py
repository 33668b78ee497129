"""The engine layer on a local Ray: same results as the local engine (embedding shards, mapped work)."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from argsim.cli.app import app
from argsim.engine import get_engine
from argsim.engine.embedding import read_shards

runner = CliRunner()


@pytest.mark.slow
def test_ray_map_keeps_order_and_shares_one_object(ray_session):
    import operator  # workers import functions by module: a library function, not one of this test file

    items = list(range(37))
    assert get_engine("ray").map(operator.sub, items, shared=5, block=4) == [5 - i for i in items]
    assert get_engine("local").map(operator.sub, items, shared=5) == [5 - i for i in items]



def test_a_quoted_header_cell_with_the_delimiter_is_one_column(tmp_path):
    """The shard path reads a CSV header as CSV: a quoted name holding a comma is one column, as the readers read it."""
    from argsim.engine.embedding import input_columns

    (tmp_path / "in.csv").write_text('\ufeffid,"claim, short",text\r\n1,a,b\r\n', encoding="utf-8")
    assert input_columns(tmp_path / "in.csv") == ["id", "claim, short", "text"]


@pytest.fixture(scope="module")
def fifty_sentences(data_dir, tmp_path_factory):
    """The first 50 arguments of ArgKP dev as a CSV (arg_id, argument)."""
    import csv

    with open(data_dir / "argkp" / "arguments_dev.csv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))[:50]
    path = tmp_path_factory.mktemp("scale") / "args.csv"
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["arg_id", "argument"])
        writer.writerows([r["arg_id"], r["argument"]] for r in rows)
    return path


def _embed(tmp_path, source, name, *engine):
    out = tmp_path / name
    result = runner.invoke(app, ["--quiet", *engine, "embed", str(source), "--column", "argument",
                                 "--id-column", "arg_id", "--out", str(out)])
    assert result.exit_code == 0, result.output
    ids, keys, vectors, manifest = read_shards(out)
    return dict(zip(ids, vectors, strict=True)), dict(zip(ids, keys, strict=True)), manifest


@pytest.mark.slow
def test_ray_embedding_shards_equal_local_and_import_into_the_cache(ray_session, fifty_sentences, tmp_path,
                                                                   minilm, monkeypatch):
    local, local_keys, m_local = _embed(tmp_path, fifty_sentences, "local")
    remote, remote_keys, m_ray = _embed(tmp_path, fifty_sentences, "ray", "--engine", "ray")
    assert m_ray["engine"] == "ray" and m_ray["actors"] == 2 and m_ray["identity"] == m_local["identity"]
    assert set(local) == set(remote) and len(local) == 50 and local_keys == remote_keys
    ids = sorted(local)
    np.testing.assert_allclose(np.stack([remote[i] for i in ids]), np.stack([local[i] for i in ids]), atol=1e-5)

    cache = tmp_path / "imported-cache"
    result = runner.invoke(app, ["--quiet", "--cache-dir", str(cache), "embed-import", str(tmp_path / "ray")])
    assert result.exit_code == 0, result.output
    from argsim.backend.cache import EmbeddingCache

    stored = EmbeddingCache(cache, minilm.identity)
    found = stored.get_keys(list(remote_keys.values()))
    stored.close()
    assert len(found) == 50
    np.testing.assert_array_equal(np.stack([found[remote_keys[i]] for i in ids]), np.stack([remote[i] for i in ids]))


def test_engine_ray_needs_a_folder_and_existing_columns(tmp_path, fifty_sentences, monkeypatch):
    monkeypatch.setattr("argsim.engine.embedding.RayEngine", lambda *a: pytest.fail("Ray before the input check"))
    result = runner.invoke(app, ["--quiet", "--engine", "ray", "embed", str(fifty_sentences), "--column",
                                 "argument", "--out", str(tmp_path / "v.npy")])
    assert result.exit_code == 2 and "give --out a new folder" in result.output
    result = runner.invoke(app, ["--quiet", "--engine", "ray", "embed", str(fifty_sentences), "--column",
                                 "body", "--out", str(tmp_path / "shards")])
    assert result.exit_code == 2 and "missing column(s) body" in result.output
    assert not (tmp_path / "shards").exists()


@pytest.fixture(scope="module")
def sda_slice(counterargs_corpus):
    from argsim.data.counterargs import build_pools

    corpus = counterargs_corpus
    points = corpus.points("test")[::280][:5]
    pools = build_pools(corpus, "test", "sda")
    return points, {p.id: pools[p.id] for p in points}, {p.id: corpus.true_counter(p).id for p in points}


@pytest.mark.slow
def test_ray_pair_work_equals_local(ray_session, sda_slice):
    """Exact WMDs, pruned Simple-SD and a logistic-regression-like linear score with a negative WMD weight:
    the same numbers on Ray tasks as in this process (counterargs-18 test, sda, 5 points)."""
    from argsim.counter.lexical.features import FeatureConfig, FeatureSpace
    from argsim.counter.lexical.prune import linear_scores
    from argsim.counter.lexical.simplesd import READINGS

    points, pools, gold = sda_slice
    ray_engine = get_engine("ray")
    local = FeatureSpace(points, pools, FeatureConfig())
    remote = FeatureSpace(points, pools, FeatureConfig(), executor=ray_engine)
    cl, _, u = local.text_ids
    pairs = np.stack(np.meshgrid(cl, u[:30]), -1).reshape(-1, 2)
    np.testing.assert_array_equal(local.engine.distances(pairs), local.engine.distances(pairs, ray_engine, 0))
    mixed = np.array([0.2, -0.3, 0.1, 0.5, -0.4, 0.3, 0.2, 0.9])  # negative WMD weights use the upper bounds too
    for w, mode in ((READINGS["literal"], "top"), (mixed, "rank")):
        a, sa = linear_scores(local, w, gold=gold, mode=mode, description=None)
        b, sb = linear_scores(remote, w, gold=gold, mode=mode, description=None)
        assert sa == sb
        for pid in a:
            np.testing.assert_array_equal(a[pid], b[pid])


def test_ivf_recall_and_exact_rerank_of_ivfpq():
    from argsim.counter.neural.index import build_index, exact_index, recall_at_k, rerank_exact

    rng = np.random.default_rng(0)
    centers = rng.normal(size=(16, 32))
    x = (centers[rng.integers(0, 16, 4000)] + 0.4 * rng.normal(size=(4000, 32))).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    q = x[:40] + 0.05 * rng.normal(size=(40, 32)).astype(np.float32)
    exact_scores, exact = exact_index(x).search(q, 10)
    every_list = build_index(x, "ivf", nlist=16, nprobe=16)  # probing every list is exact search
    assert recall_at_k(every_list.search(q, 10)[1], exact, 10) == 1.0
    pq = build_index(x, "ivfpq", nlist=16, nprobe=16, pq_m=8)
    _, candidates = pq.search(q, 40)
    scores, reranked = rerank_exact(x, q, candidates)
    assert np.all(np.diff(scores, axis=1) <= 0)
    assert recall_at_k(reranked, exact, 10) >= recall_at_k(candidates, exact, 10)
    for row in range(len(q)):  # the rerank is the exact top of the candidate set
        cand = candidates[row][candidates[row] >= 0]
        best = cand[np.argsort(-(x[cand] @ q[row]), kind="stable")][:10]
        assert set(best.tolist()) == set(reranked[row, :10].tolist())
    np.testing.assert_allclose(scores[:, 0], np.einsum("qd,qd->q", q, x[reranked[:, 0]]), rtol=1e-6)


@pytest.mark.parametrize("kind", ["ivfsq8", "ivfpqfs"])
def test_quantised_ivf_with_exact_refine_matches_numpy_exact_search_on_real_vectors(kind, minilm, data_dir):
    """The 8-bit / 4-bit fast-scan IVF indexes on MiniLM vectors of the ArgKP dev arguments, queried by ArgKP
    training key points: their scores are exact inner products (the refine step) and, probing every list, their
    top-10 is numpy's exact top-10; probing a quarter of the lists keeps most of it."""
    from argsim.counter.neural.index import build_index, recall_at_k
    from argsim.io import read_records
    from argsim.schemas import text_records

    args = [r["argument"] for r in read_records(data_dir / "argkp" / "arguments_dev.csv", text_records("argument"))]
    kps = [r["key_point"] for r in read_records(data_dir / "argkp" / "key_points_train.csv",
                                                  text_records("key_point"))][:40]
    x = minilm.encode(args, normalize=True, show_progress=False).astype(np.float32)
    q = minilm.encode(kps, normalize=True, show_progress=False).astype(np.float32)
    exact = np.argsort(-(q @ x.T), axis=1, kind="stable")[:, :10]  # independent reference: numpy, not faiss
    index = build_index(x, kind, nlist=16, nprobe=16)  # the kind's default re-scoring depth
    scores, ids = index.search(q, 10)
    assert recall_at_k(ids, exact, 10) >= 0.99
    np.testing.assert_allclose(scores, np.einsum("qd,qkd->qk", q, x[ids]), rtol=1e-5, atol=1e-6)
    assert np.all(np.diff(scores, axis=1) <= 1e-6)
    import faiss

    faiss.extract_index_ivf(index).nprobe = 4
    assert recall_at_k(index.search(q, 10)[1], exact, 10) >= 0.6


def test_auto_index_is_exact_for_small_collections_and_ivf_above():
    from argsim.counter.neural.index import AUTO_FLAT_MAX, auto_kind, build_index

    assert auto_kind(AUTO_FLAT_MAX)[0] == "flat"
    assert auto_kind(1_000_000) == ("ivf", 4096, 128)  # the configuration bench_scale measured at 1M
    assert auto_kind(AUTO_FLAT_MAX + 1)[0] == "ivf"
    rng = np.random.default_rng(1)
    x = rng.normal(size=(500, 16)).astype(np.float32)
    _, ids = build_index(x, "auto").search(x[:5], 3)
    np.testing.assert_array_equal(ids, np.argsort(-(x[:5] @ x.T), axis=1, kind="stable")[:, :3])


def test_long_files_are_embedded_a_chunk_at_a_time(tmp_path, monkeypatch):
    """A file longer than a chunk is written as it is computed (.npy and shard folders) and reads back as the
    in-memory result, row for row."""
    import argsim.api.encode as api_encode
    from argsim.engine.embedding import EmbedSpec, embed_local

    texts = [f"argument number {i} about taxes" for i in range(7)]
    (tmp_path / "t.txt").write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    config = argsim_config(tmp_path)
    whole = api_encode.encode(texts, config=config)
    monkeypatch.setattr(api_encode, "STREAM_ROWS", 3)
    result = api_encode.embed_file(tmp_path / "t.txt", tmp_path / "v.npy", config=config)
    assert result.shape == whole.shape
    np.testing.assert_allclose(np.load(tmp_path / "v.npy"), whole, atol=1e-6)
    embed_local(tmp_path / "t.txt", tmp_path / "shards", EmbedSpec(), config=config, rows_per_shard=3)
    _ids, _keys, vectors, manifest = read_shards(tmp_path / "shards")
    assert manifest["rows"] == 7 and manifest["dim"] == whole.shape[1]
    np.testing.assert_allclose(np.sort(vectors, axis=0), np.sort(whole, axis=0), atol=1e-6)


def argsim_config(tmp_path):
    from argsim.config import RunConfig

    return RunConfig(cache_dir=tmp_path / "cache", quiet=True)


def test_shards_are_refused_when_the_model_now_gives_nan_vectors(tmp_path):
    """verify_shards compares each sampled row with the vector computed now: a NaN there (an fp16 overflow) is a
    cosine of 0, refused; it is not a NaN that no threshold test fails (which let every shard in)."""
    from argsim.backend.cache import text_key
    from argsim.engine.embedding import verify_shards
    from argsim.errors import ArgsimError

    class Fixed:  # the encoder the manifest names, giving `out` for any texts
        cache_key = "fixed:1"

        def __init__(self, out):
            self.out = out

        def encode(self, texts, **_):
            return np.tile(self.out, (len(texts), 1))

    source = tmp_path / "texts.txt"
    source.write_text("one claim\nanother claim\n", encoding="utf-8")
    keys = [text_key("one claim"), text_key("another claim")]
    vectors = np.ones((2, 3), dtype=np.float32)
    manifest = {"identity": "fixed:1", "model": "fixed", "column": "text"}
    verify_shards(tmp_path, keys, vectors, manifest, Fixed(np.full(3, 2.0, np.float32)), source)  # same direction
    with pytest.raises(ArgsimError, match=r"row \d is not 'fixed'.s vector of its text \(cosine 0.0000"):
        verify_shards(tmp_path, keys, vectors, manifest, Fixed(np.full(3, np.nan, np.float32)), source)
