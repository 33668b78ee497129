"""Model selection of every sentence-transformers trainer (`argsim.training.trainer.fit(select=...)`): the kept weights
are those of the best evaluation, not the last step's (first of equal scores), for a full model and for a LoRA
adapter; a --resume'd run keeps a best found before the stop; a budget's stop is scored too (per-step and per-epoch
cadences); a run without evaluation keeps its last weights.

The evaluator is a stub whose score is set per step, so the best step is known in advance; it also copies the
trainable weights at each evaluation, the reference the kept model is compared with. A tiny random BERT at a high
learning rate moves its weights at every step."""

from __future__ import annotations

import pytest
import torch

from argsim.training import Budget, OptimPolicy, resolve_placement

PAIRS = [("Coffee is brewed from roasted beans.", "Espresso is a strong coffee drink.", 1.0),
         ("Solar panels turn sunlight into electricity.", "The striker scored a late goal.", 0.0),
         ("The goalkeeper saved a penalty.", "Fans sang in the stadium.", 1.0),
         ("Arabica beans have a mild taste.", "Solar farms cover large desert areas.", 0.0),
         ("Photovoltaic cells are made of silicon.", "Batteries store solar energy for the night.", 1.0),
         ("The coach changed the formation.", "Coffee houses spread across Europe.", 0.0),
         ("Football matches last ninety minutes.", "The team won the league title.", 1.0),
         ("Coffee plants grow in the tropics.", "The sun provides energy for panels on roofs.", 0.0)]
ROWS = {"sentence1": [a for a, _, _ in PAIRS], "sentence2": [b for _, b, _ in PAIRS],
        "label": [y for _, _, y in PAIRS]}  # 8 pairs, batch 2: 4 steps per epoch


def stub_evaluator(scores: dict[int, float]):
    """A sentence-transformers evaluator returning `scores[step]` as "stub_score" (prefixed "eval_" by the
    trainer) and keeping a copy of the model's trainable weights at each step it scores (`.weights`)."""
    from sentence_transformers.base.evaluation import BaseEvaluator

    class Stub(BaseEvaluator):
        def __init__(self) -> None:
            super().__init__()
            self.primary_metric, self.weights = "stub_score", {}

        def __call__(self, model, output_path=None, epoch: float = -1, steps: int = -1) -> dict:
            self.weights[steps] = trainable(model)
            return {"stub_score": scores[steps]}

    return Stub()


def trainable(model) -> dict[str, torch.Tensor]:
    return {k: p.detach().clone() for k, p in model.named_parameters() if p.requires_grad}


def same(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def model_of(tiny_bert, lora: bool):
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(tiny_bert), device="cpu")
    if lora:
        from argsim.backend.adapters import add_lora

        add_lora(model, 4, 8.0, 0.0)
    return model


def fit(model, out, scores, budget, eval_every: int = 2, lora: bool = False, select: str | None = "stub_score"):
    from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss

    from argsim.training.trainer import TrainRun
    from argsim.training.trainer import fit as train

    torch.manual_seed(0)
    evaluator = stub_evaluator(scores) if scores is not None else None
    placement = resolve_placement("cpu", "fp32", threads=1, seed=13)
    policy = OptimPolicy(lr=5e-2 if lora else 1e-2, weight_decay=0.0)
    trainer, run = train(model, ROWS, TrainRun(out, placement, budget, policy, 2, 2), CosineSimilarityLoss(model),
                         evaluator=evaluator, eval_every=eval_every, select=select, dataloader_drop_last=False)
    return evaluator, trainer, run


@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_the_kept_weights_are_the_best_evaluation_not_the_last_step(tiny_bert, tmp_path, lora):
    """Evaluations at steps 2, 4, 6, 8 scoring 0.3, 0.7, 0.7, 0.5: the model ends with step 4's weights (step 6
    ties it and comes later; step 8 is the last), and the run records step 4 and 0.7."""
    model = model_of(tiny_bert, lora)
    scores = {2: 0.3, 4: 0.7, 6: 0.7, 8: 0.5}
    ev, trainer, run = fit(model, tmp_path / "m", scores, Budget(), lora=lora)
    assert sorted(ev.weights) == [2, 4, 6, 8] and run["steps"] == 8
    assert not same(ev.weights[4], ev.weights[6]) and not same(ev.weights[4], ev.weights[8])  # the weights moved
    assert run["best"] == {"step": 4, "value": 0.7}
    assert same(trainable(model), ev.weights[4])
    if lora:  # what the trainer saves to OUT (the adapter alone) loads back as step 4's weights
        from argsim.backend.adapters import apply_adapter, save_adapter

        save_adapter(model, tmp_path / "out", str(tiny_bert))
        assert same(trainable(apply_adapter(tmp_path / "out", device="cpu", trainable=True)), ev.weights[4])
    else:
        from sentence_transformers import SentenceTransformer

        model.save(str(tmp_path / "out"))
        assert same(trainable(SentenceTransformer(str(tmp_path / "out"), device="cpu")), ev.weights[4])


def test_a_resumed_run_keeps_the_best_found_before_the_stop(tiny_bert, tmp_path):
    """A --max-steps 5 stop after evaluations at steps 2 and 4 scores the stopped weights too (step 5); the run
    resumed from the stop's checkpoint evaluates steps 6 and 8, none better than step 2, and ends with step 2's
    weights, which only the first run ever held in memory."""
    out = tmp_path / "m"
    scores = {2: 0.9, 4: 0.2, 5: 0.1, 6: 0.3, 8: 0.4}
    first, _, run = fit(model_of(tiny_bert, False), out, scores, Budget(max_steps=5))
    assert [e["step"] for e in run["evals"]] == [2, 4, 5] and run["stopped_by"] == "max_steps"
    assert run["best"] == {"step": 2, "value": 0.9}
    assert {p.name for p in (out / "checkpoints").glob("checkpoint-*")} == {"checkpoint-2", "checkpoint-5"}
    model = model_of(tiny_bert, False)
    second, _, run = fit(model, out, scores, Budget(resume=True))
    assert sorted(second.weights) == [6, 8] and run["steps"] == 8 and run["resumed_from"].endswith("checkpoint-5")
    assert run["best"] == {"step": 2, "value": 0.9}
    assert same(trainable(model), first.weights[2])


def test_without_an_evaluation_the_last_weights_stay(tiny_bert, tmp_path):
    """`select` without an evaluator: no selection arguments, no best, the model trained to the last step (the
    same weights as a run without `select`)."""
    a, b = model_of(tiny_bert, False), model_of(tiny_bert, False)
    _, trainer, run = fit(a, tmp_path / "a", None, Budget(), select="stub_score")
    fit(b, tmp_path / "b", None, Budget(), select=None)
    assert run["best"] is None and not trainer.args.load_best_model_at_end and run["steps"] == 8
    assert same(trainable(a), trainable(b))


def test_selection_arguments_save_at_every_evaluation():
    from argsim.errors import ArgsimError
    from argsim.training.trainer import selection_arguments

    kw = selection_arguments("dev_map", 4, Budget(checkpoint_every=8))
    assert kw["eval_steps"] == kw["save_steps"] == 4 and kw["metric_for_best_model"] == "eval_dev_map"
    assert kw["load_best_model_at_end"] and kw["greater_is_better"] and kw["save_total_limit"] == 2
    assert selection_arguments("eval_loss", 0, Budget(checkpoint_every=3))["greater_is_better"] is False
    assert selection_arguments("eval_loss", 0, Budget(checkpoint_every=3))["save_steps"] == 3
    with pytest.raises(ArgsimError, match="--checkpoint-every 6 must be a multiple of --eval-every 4"):
        selection_arguments("dev_map", 4, Budget(checkpoint_every=6))


def test_per_epoch_evaluations_score_a_budget_stop_too(tiny_bert, tmp_path):
    """No --eval-every and no --checkpoint-every: evaluations at each epoch's end (step 4) and where --max-steps 6
    stops the second epoch (step 6); the stop scores best here, so its weights are kept."""
    model = model_of(tiny_bert, False)
    ev, trainer, run = fit(model, tmp_path / "m", {4: 0.5, 6: 0.6}, Budget(max_steps=6), eval_every=0)
    assert [e["step"] for e in run["evals"]] == [4, 6] and run["stopped_by"] == "max_steps"  # each once
    assert run["best"] == {"step": 6, "value": 0.6} and same(trainable(model), ev.weights[6])
    assert (tmp_path / "m" / "checkpoints" / "checkpoint-6").is_dir()


@pytest.mark.parametrize("custom", [False, True], ids=["sentence-transformers", "module"])
def test_select_overrides_the_primary_metric_and_the_selection_overrides_extra(tiny_bert, tmp_path, monkeypatch,
                                                                                custom):
    """The kept step is chosen by `select` where given, else by the evaluator's primary metric; an `extra` training
    argument cannot undo the selection's (each evaluation saved, the best and the newest kept), for either kind."""
    from sentence_transformers.sentence_transformer.losses import CosineSimilarityLoss

    import argsim.training.trainer as trainer_module
    from argsim.training.trainer import TrainRun, shuffled_batches

    monkeypatch.setattr(trainer_module, "run_trainer", lambda trainer, *args: {})  # the arguments, no training
    placement = resolve_placement("cpu", "fp32", threads=1, seed=13)

    def args(select: str | None, **extra: object):
        run = TrainRun(tmp_path, placement, Budget(), OptimPolicy(lr=1e-2), 2, 2)
        if custom:
            model = torch.nn.Linear(2, 1)
            data, loss = shuffled_batches(range(4), 2, seed=13), lambda net, batch: net(torch.ones(1, 2)).sum()
        else:
            model = model_of(tiny_bert, False)
            data, loss = ROWS, CosineSimilarityLoss(model)
        trainer, _ = trainer_module.fit(model, data, run, loss, evaluator=stub_evaluator({}), eval_every=2,
                                        select=select, **extra)
        return trainer.args

    assert args(None).metric_for_best_model == "eval_stub_score"
    assert args("eval_other_loss").metric_for_best_model == "eval_other_loss"
    kept = args(None, save_steps=3, save_total_limit=1, metric_for_best_model="eval_x", logging_steps=7)
    assert (kept.save_steps, kept.save_total_limit, kept.metric_for_best_model) == (2, 2, "eval_stub_score")
    assert kept.logging_steps == 7 and kept.load_best_model_at_end


def test_a_custom_network_without_an_evaluator_is_saved_each_epoch_unless_checkpoint_every(tmp_path, monkeypatch):
    """A `ModuleData` run without an evaluator leaves a checkpoint at every epoch end (what an interrupted custom
    run resumes from), or every `--checkpoint-every` steps."""
    import argsim.training.trainer as trainer_module
    from argsim.training.trainer import TrainRun, shuffled_batches

    monkeypatch.setattr(trainer_module, "run_trainer", lambda trainer, *args: {})  # the arguments, no training
    placement = resolve_placement("cpu", "fp32", threads=1, seed=13)
    for budget, strategy, steps in ((Budget(), "epoch", 500), (Budget(checkpoint_every=3), "steps", 3)):
        run = TrainRun(tmp_path, placement, budget, OptimPolicy(lr=1e-2), 2, 2)
        trainer, _ = trainer_module.fit(torch.nn.Linear(2, 1), shuffled_batches(range(4), 2, seed=13), run,
                                        lambda net, batch: net(torch.ones(1, 2)).sum())
        assert (trainer.args.save_strategy, trainer.args.save_steps) == (strategy, steps)
