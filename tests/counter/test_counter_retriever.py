"""`argsim train counter-retriever`: hard negatives, the held-out texts, and a tiny run that learns."""

from __future__ import annotations

import pytest

from argsim.data.counterargs import Argument, CounterCorpus
from argsim.trainers.counter_retriever import RetrieverConfig, hard_negative, train_counter_retriever, training_rows


def _arg(split: str, debate: str, stance: str, number: int, kind: str, text: str) -> Argument:
    return Argument(f"{split}/t/{debate}/{stance}/{stance}{number:02d}{'a' if kind == 'point' else 'b'}", split, "t",
                    debate, stance, kind, number, "", text, text)


def _toy_corpus() -> CounterCorpus:
    args = []
    for split in ("training", "validation", "test"):
        for stance in ("pro", "con"):
            for n in (1, 2):
                args += [_arg(split, "d", stance, n, "point", f"{split} {stance} point {n}"),
                         _arg(split, "d", stance, n, "counter", f"{split} {stance} counter {n}")]
    # a training pair whose counter's text is also a test text, and a training point repeated in validation
    args += [_arg("training", "d", "pro", 3, "point", "training pro point 3"),
             _arg("training", "d", "pro", 3, "counter", "test con counter 1"),
             _arg("training", "d", "con", 3, "point", "validation pro point 2"),
             _arg("training", "d", "con", 3, "counter", "training con counter 3")]
    return CounterCorpus(args)


def test_hard_negatives_come_from_the_debate_and_never_answer_the_point() -> None:
    import random

    corpus = _toy_corpus()
    point, counter = corpus.pairs("training")[0]
    debate = corpus.split("training")
    drawn = {hard_negative(point, counter, debate, random.Random(seed)).id for seed in range(50)}
    # the other counters and the opposing side's points; never the point, its counter or a point of its own side
    want = {a.id for a in debate if a.id not in (point.id, counter.id) and a.text != counter.text
            and (a.kind == "counter" or a.stance != point.stance)}
    assert drawn == want and point.id not in drawn and counter.id not in drawn
    assert all(corpus.by_id[i].kind == "counter" or corpus.by_id[i].stance != point.stance for i in drawn)


def test_training_rows_leave_out_every_validation_and_test_text() -> None:
    corpus = _toy_corpus()
    rows = training_rows(corpus, seed=1)
    held = {a.text for s in ("validation", "test") for a in corpus.split(s)}
    assert len(rows["anchor"]) == 4  # the 4 clean training pairs; the two that repeat held-out texts are left out
    assert not held & set(rows["anchor"] + rows["positive"] + rows["negative"])
    assert rows["positive"][rows["anchor"].index("training pro point 1")] == "training pro counter 1"
    assert len(training_rows(corpus, held_out_splits=())["anchor"]) == 6


@pytest.mark.slow
def test_a_tiny_run_learns(counterargs_corpus, tmp_path) -> None:
    """A few steps on a few debates: the loss falls and the validation nDCG@10 rises above the untrained model's;
    the folder is an adapter that loads by path."""
    from argsim.backend import get_encoder, load_sentence_transformer
    from argsim.trainers.counter_retriever import validation_evaluator

    def debates(split: str, n: int) -> list:
        keep = sorted({a.debate for a in counterargs_corpus.split(split)})[:n]
        return [a for a in counterargs_corpus.split(split) if a.debate in keep]

    corpus = CounterCorpus(debates("training", 3) + debates("validation", 2))
    config = RetrieverConfig(lr=1e-3, batch_size=16, mini_batch_size=16, epochs=3, max_seq_length=24,
                             encode_max_seq_length=24, eval_every=2, lora_rank=4)
    untrained = load_sentence_transformer("minilm")
    untrained.max_seq_length = 24
    before = validation_evaluator(corpus)(untrained)["validation_ndcg_at_10"]
    stats = train_counter_retriever(config, tmp_path / "cr", corpus=corpus)
    assert stats["losses"][-1] < stats["losses"][0]
    assert stats["selection_ndcg_at_10"] > before
    vec = get_encoder(str(tmp_path / "cr")).for_role("query").encode(["Uniforms stop bullying."], use_cache=False)
    assert vec.shape == (1, 384)
