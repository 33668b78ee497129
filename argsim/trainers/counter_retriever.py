"""`argsim train counter-retriever`: a LoRA adapter over MiniLM trained for counter-argument retrieval in an open
collection (every argument of every debate a candidate, as in BEIR's ArguAna: Thakur et al., "BEIR: A
Heterogeneous Benchmark for Zero-shot Evaluation of Information Retrieval Models", NeurIPS 2021 Datasets and
Benchmarks, built from counterargs-18 of Wachsmuth et al., ACL 2018).

Recipe: sentence-transformers' `CachedMultipleNegativesRankingLoss` (Gao et al., "Scaling Deep Contrastive
Learning Batch Size under Memory Limited Setup", RepL4NLP 2021: the in-batch-negatives loss of Henderson et al.
2017 with a large batch computed in mini-batches) over (point, its counter, a hard negative) of counterargs-18's
training split, the hard negative drawn (seeded) from the same debate (`hard_negative`); one tower for both sides.

Model selection: nDCG@10 of the ArguAna replica's validation split (`validation_evaluator`) every `eval_every`
steps (`fit`'s selection). No test text is read: pairs and negatives whose text recurs in the validation or test
split are left out (`training_rows`).
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

from argsim.backend import load_sentence_transformer
from argsim.backend.adapters import add_lora
from argsim.backend.models import set_st_max_seq_length
from argsim.data.arguana import build_arguana
from argsim.data.counterargs import Argument, CounterCorpus, load_counterargs
from argsim.options import setting
from argsim.training import begin_run
from argsim.training.record import data_hash, run_info, save_run

SELECTION_METRIC = "eval_validation_ndcg_at_10"


@dataclass
class RetrieverConfig:
    """Settings of `argsim train counter-retriever`; the defaults are the recommended recipe, the measured run of
    docs/counterargs-neural.md (two epochs, validated every 32 steps, the best kept: step 64).

    Example:
        >>> RetrieverConfig().lora_rank, RetrieverConfig().lr
        (16, 0.0002)
    """

    model: str = setting("minilm", "The sentence-transformers model the adapter adapts.", model=True)
    lora_rank: int = setting(16, "LoRA rank r (the shipped adapters' 16).", min=1)
    lora_alpha: float = setting(32.0, "LoRA scale numerator (the update is multiplied by alpha / rank).", min=0)
    lr: float = setting(2e-4, "AdamW learning rate (10% warm-up, linear decay).", min=0)
    batch_size: int = setting(64, "Examples per step: each point's counter is ranked against every other "
                              "counter and hard negative of the batch.", min=2)
    mini_batch_size: int = setting(32, "Texts per forward pass of the cached loss (memory only; the result "
                                   "does not depend on it).", min=1)
    scale: float = setting(20.0, "Inverse temperature of the loss's softmax over cosine similarities.", min=0)
    epochs: int = setting(2, "Passes over the training points (the validation figure levels off after 1.5).",
                         min=1)
    max_seq_length: int = setting(128, "Tokens per text in training and in the selection's validation runs "
                                  "(MiniLM's own pre-training length; half the cost of 256).", min=8)
    encode_max_seq_length: int = setting(256, "Tokens per text when the trained model encodes (its card's length; "
                                         "the validation nDCG@10 is scored again with it at the end).", min=8)
    eval_every: int = setting(32, "Score the validation collection every N steps (and where the run ends) and keep "
                              "the best; 0: keep the last weights.", min=0)
    validate: bool = setting(True, "Score the validation collection with the kept weights at the end (the "
                             "model's recorded figure in train_config.json and card.json).")
    limit: int | None = setting(None, "Train on the first N training points only (quick runs).", min=1)
    val_limit: int | None = setting(None, "Validate on the first N validation points only (the collection keeps "
                                    "every training and validation argument).", min=1)
    seed: int = setting(13, "Seed of the hard negatives' draw and of the trainer.", cli=False)


def hard_negative(point: Argument, counter: Argument, debate: list[Argument], rng: random.Random) -> Argument | None:
    """A hard negative for (point, counter): one argument of the same debate drawn from the other counters and the
    points of the opposing side (the arguments that share the topic but do not answer `point`); None when the
    debate has none. Texts identical to the counter's are never drawn (counterargs-18 repeats some counters)."""
    pool = [a for a in debate if a.id not in (point.id, counter.id) and a.text != counter.text
            and (a.kind == "counter" or a.stance != point.stance)]
    return rng.choice(pool) if pool else None


def training_rows(corpus: CounterCorpus, split: str = "training", seed: int = 13, limit: int | None = None,
                  held_out_splits: tuple[str, ...] = ("validation", "test")) -> dict[str, list[str]]:
    """The loss's columns {anchor, positive, negative}: every point of `split` with its counter and a hard negative
    (`hard_negative`, else a random counter of the split). counterargs-18 repeats texts across splits (16% of the
    training pairs hold a test text): a pair or negative with a text of `held_out_splits` is left out.

    Example:
        >>> rows = training_rows(load_counterargs(), limit=8)  # doctest: +SKIP
        >>> sorted(rows), len(rows["anchor"])  # doctest: +SKIP
        (['anchor', 'negative', 'positive'], 8)
    """
    rng = random.Random(seed)
    held_out = {a.text for s in held_out_splits for a in corpus.split(s)}
    by_debate: dict[tuple[str, str], list[Argument]] = defaultdict(list)
    for a in (a for a in corpus.split(split) if a.text not in held_out):
        by_debate[(a.theme, a.debate)].append(a)
    pairs = [(p, c) for p, c in corpus.pairs(split) if p.text not in held_out and c.text not in held_out]
    pairs = pairs[:limit] if limit else pairs
    counters = [a for a in corpus.counters(split) if a.text not in held_out]
    negatives = [hard_negative(p, c, by_debate[(p.theme, p.debate)], rng) or rng.choice(counters) for p, c in pairs]
    return {"anchor": [p.text for p, _ in pairs], "positive": [c.text for _, c in pairs],
            "negative": [n.text for n in negatives]}


def validation_evaluator(corpus: CounterCorpus, limit: int | None = None):
    """The selection's `ArguAnaEvaluator` "validation" (`SELECTION_METRIC`) on the replica's validation split (no
    test text; `argsim.data.arguana`); `limit`: its first N queries."""
    from argsim.evaluation.arguana import ArguAnaEvaluator

    return ArguAnaEvaluator(build_arguana(corpus, "validation").head(limit), name="validation")


def train_counter_retriever(config: RetrieverConfig, out: Path, placement=None, budget=None,
                            quiet: bool = True, corpus: CounterCorpus | None = None,
                            data_dir: str | Path | None = None) -> dict:
    """Train the open-collection counter retriever (the module docstring) and save its adapter to `out`.

    Args:
        config: the recipe (`RetrieverConfig`).
        out: the model folder (checkpoints under OUT/checkpoints; `--resume` continues from them).
        placement, budget: the run's device/precision/seed and budgets (`argsim.training`); None: CPU, fp32, none.
        quiet: no progress bars.
        corpus: counterargs-18 (None: loaded from `data_dir`).
        data_dir: the data folder counterargs-18 is read from when `corpus` is None (None: the default one).

    Returns:
        the run's statistics (steps, seconds, losses, validation scores, the best step and its nDCG@10).

    Example:
        >>> stats = train_counter_retriever(RetrieverConfig(limit=64, epochs=1), Path("runs/cr"))  # doctest: +SKIP
    """
    from sentence_transformers.sentence_transformer.losses import CachedMultipleNegativesRankingLoss

    from argsim.training.trainer import fit, save_st

    run = begin_run(config, out, placement, budget, config.eval_every, {"warmup_ratio": 0.1}, "counter-retriever")
    corpus = corpus or load_counterargs(data_dir)
    rows = training_rows(corpus, "training", seed=run.placement.seed, limit=config.limit)
    model = load_sentence_transformer(config.model, device=run.placement.device)
    set_st_max_seq_length(model, config.model, config.max_seq_length)
    add_lora(model, config.lora_rank, config.lora_alpha)  # the cached in-batch-negatives loss over the adapter
    loss = CachedMultipleNegativesRankingLoss(model, scale=config.scale, mini_batch_size=config.mini_batch_size)
    evaluator = validation_evaluator(corpus, config.val_limit) if config.eval_every or config.validate else None
    trainer, rec = fit(model, rows, run, loss, evaluator=evaluator if config.eval_every else None,
                       select=SELECTION_METRIC, eval_every=config.eval_every, disable_tqdm=quiet,
                       batch_sampler="no_duplicates")
    best = rec["best"] or {}
    model.max_seq_length = config.encode_max_seq_length
    final = evaluator(model)[SELECTION_METRIC.removeprefix("eval_")] if config.validate else None
    stats = {"base": config.model, "examples": len(rows["anchor"]), **run_info(run, rec), "best_step": best.get("step"),
             "selection_ndcg_at_10": best.get("value"), "encode_max_seq_length": config.encode_max_seq_length,
             "validation_ndcg_at_10": final}
    if trainer.is_world_process_zero():
        save_st(model, run.out, config.model, {k: stats[k] for k in ("steps", "seconds", "validation_ndcg_at_10")})
        save_run(run, asdict(config), {"train": data_hash(rows)}, rec, {"validation_ndcg_at_10": final}, config.model,
                 {"argsim_training.json": stats})
    return stats | {"losses": rec["losses"], "evals": rec["evals"]}
