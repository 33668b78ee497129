"""MTS pieces: loss terms on small tensors with closed-form values, pseudo-label batches, topic folds; training
on a tiny random BERT learns (held-out mAP) and keeps the best dev epoch."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from argsim.kpm.mts.network import ClusterLoss, PairContrastiveLoss


def unit(deg: float) -> list[float]:
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg))]


def test_tuplet_margin_is_in_degrees():
    emb = torch.tensor([unit(0), unit(30), unit(60), unit(90)])
    loss = ClusterLoss(margin_deg=10.0, scale=8.0, mine=False)
    indices = (torch.tensor([0]), torch.tensor([1]), torch.tensor([0, 0]), torch.tensor([2, 3]))
    got = loss.tuplet(emb, indices_tuple=indices).item()
    cos_ap = math.cos(math.radians(30 - 10))  # cos(theta_ap - beta), beta = 10 degrees
    want = math.log(1 + math.exp(8 * (math.cos(math.radians(60)) - cos_ap)) + math.exp(8 * (0.0 - cos_ap)))
    assert got == pytest.approx(want, rel=1e-5)
    as_radians = math.log(1 + math.exp(8 * (0.5 - math.cos(math.radians(30) - 10))) + math.exp(-8 * math.cos(
        math.radians(30) - 10)))
    assert got != pytest.approx(as_radians, rel=1e-3)


def test_intra_pair_variance_closed_form():
    emb = torch.tensor([unit(0), unit(30), unit(10), unit(60), unit(80)])
    loss = ClusterLoss(mine=False)
    indices = (torch.tensor([0, 0]), torch.tensor([1, 2]), torch.tensor([0, 0]), torch.tensor([3, 4]))
    got = loss.ipv(emb, indices_tuple=indices).item()
    pos = [math.cos(math.radians(d)) for d in (30, 10)]
    neg = [math.cos(math.radians(d)) for d in (60, 80)]
    mp, mn = sum(pos) / 2, sum(neg) / 2
    want = (sum(max(0.0, 0.99 * mp - s) ** 2 for s in pos) / 2
            + sum(max(0.0, s - 1.01 * mn) ** 2 for s in neg) / 2)
    assert want > 0.01
    assert got == pytest.approx(want, rel=1e-5)


def test_multi_similarity_miner_rule():
    # anchor 0 and 1 share a label; 2 is 50 degrees from 0 on the other side (90 degrees from 1)
    emb = torch.tensor([unit(0), unit(40), unit(-50)])
    labels = torch.tensor([0, 0, 1])
    a1, p, a2, n = ClusterLoss(miner_epsilon=0.2).miner(emb, labels)
    # cos50 = 0.643 > min positive cos40 - 0.2 = 0.566: hard negative of anchor 0
    assert (0, 2) in set(zip(a2.tolist(), n.tolist(), strict=False))
    _, _, a2, n = ClusterLoss(miner_epsilon=0.05).miner(emb, labels)
    assert len(a2) == 0  # 0.643 < 0.766 - 0.05: too easy


def test_cluster_loss_is_tuplet_plus_weighted_ipv_on_mined_pairs():
    torch.manual_seed(0)
    emb = torch.nn.functional.normalize(torch.randn(12, 8), dim=1)
    labels = torch.tensor([0, 0, 0, 1, 1, 1, 2, 2, 3, 4, 5, 6])
    loss = ClusterLoss(margin_deg=5.73, ipv_weight=0.5, miner_epsilon=0.2)
    indices = loss.miner(emb, labels)
    want = loss.tuplet(emb, labels, indices) + 0.5 * loss.ipv(emb, labels, indices)
    assert loss(emb, labels).item() == pytest.approx(want.item(), rel=1e-6)


def test_simakp_contrastive_pairs():
    args = torch.tensor([unit(0), unit(0), unit(0)])
    kps = torch.tensor([unit(math.degrees(math.acos(0.8))), unit(math.degrees(math.acos(0.7))),
                        unit(math.degrees(math.acos(0.3)))])
    labels = torch.tensor([1, 0, 0])
    got = PairContrastiveLoss(pos_margin=1.0, neg_margin=0.5, mine=False)(args, kps, labels).item()
    # positive: 1 - 0.8; negatives: max(0, 0.7 - 0.5), max(0, 0.3 - 0.5) = 0; pml averages non-zero terms
    assert got == pytest.approx(0.2 + 0.2, rel=1e-4)
    mined = PairContrastiveLoss(pos_margin=1.0, neg_margin=0.5, epsilon=0.05)(args, kps, labels).item()
    # mining keeps the negative with cos >= 0.8 - 0.05 only: none -> positive cos 0.8 <= 0.7 + 0.05? no -> 0
    assert mined == pytest.approx(0.0)


def test_cluster_batches_pseudo_labels(data_dir):
    from argsim.data.argkp import load_argkp
    from argsim.kpm.mts.batches import cluster_batches, pseudo_labels

    train = load_argkp("train", data_dir)
    train = train.subset(train.topics[:2])
    kp_label, arg_label, first_free = pseudo_labels(train)
    batches = cluster_batches(train, max_pos=5, max_neg=6, max_unmatched=3, seed=1)
    assert len(batches) == sum(1 for k in train.key_points if any(
        v == 1 and kid == k.kp_id for (_, kid), v in train.labels.items()))
    for b in batches:
        kp = train.kp_by_id[b.key_point_id]
        assert b.statements[0].text == kp.text and b.labels[0] == kp_label[kp.kp_id]
        assert all(s.topic == kp.topic and s.stance == kp.stance for s in b.statements)
        n_pos = b.labels.count(b.labels[0]) - 1
        assert 1 <= n_pos <= 5 + 6  # positives, plus negatives that match the same other key point
        unmatched = [lab for lab in b.labels if lab >= first_free]
        assert len(unmatched) == len(set(unmatched)) <= 3
    assert batches != cluster_batches(train, max_pos=5, max_neg=6, max_unmatched=3, seed=2)


def test_topic_folds_fold1_is_official(data_dir):
    from argsim.data.argkp import load_argkp
    from argsim.kpm.mts.batches import topic_folds

    train, dev = load_argkp("train", data_dir), load_argkp("dev", data_dir)
    folds = topic_folds(train, dev, 7)
    assert len(folds) == 7 and folds[0] == (train, dev)
    held = [set(h.topics) for _, h in folds[1:]]
    assert all(len(h) == 4 for h in held) and set().union(*held) == set(train.topics)
    for tr, h in folds[1:]:
        assert not set(tr.topics) & set(h.topics) and len(tr.topics) == 24


def test_identity_init_starts_from_the_zero_shot_encoder(minilm):
    from argsim.kpm.mts.config import MTSConfig
    from argsim.kpm.mts.network import build_net

    net = build_net(MTSConfig(pooling="mean", out_dim=384, identity_init=True)).eval()
    texts = ["School uniform reduces bullying", "Whaling is cruel to intelligent animals"]
    with torch.no_grad():
        got = net(texts, ["Uniforms", "Whaling"], [1, -1]).numpy()
    want = minilm.encode(texts, use_cache=False)
    cos = (got * want).sum(1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1))
    assert np.allclose(cos, 1.0, atol=1e-5)


@pytest.fixture(scope="module")
def fit_and_held(data_dir):
    """One ArgKP training topic: three quarters of its arguments to train on, the other quarter held out (same key
    points, arguments never trained on)."""
    from argsim.data.argkp import KPMData, load_argkp

    train = load_argkp("train", data_dir)
    topic = train.subset(train.topics[:1])

    def part(held: bool, name: str) -> KPMData:
        args = [a for i, a in enumerate(topic.arguments) if (i % 4 == 0) == held]
        ids = {a.arg_id for a in args}
        return KPMData(name, args, topic.key_points, {p: y for p, y in topic.labels.items() if p[0] in ids})

    fit, held = part(False, "fit"), part(True, "held")
    assert not {a.arg_id for a in fit.arguments} & {a.arg_id for a in held.arguments} and held.labels
    return fit, held


def _tiny_mts(tiny_bert, folder, fit, lr: float, head_lr: float, epochs: int = 2, dev=None,
              dropout: float = 0.1):
    """MTS on the tiny random BERT (one thread: fastest on a busy machine); its info and held-out mAP scorer."""
    from argsim.kpm.mts.config import MTSConfig
    from argsim.trainers.mts import train_mts
    from argsim.training import resolve_placement

    cfg = MTSConfig(model=str(tiny_bert), pooling="mean", epochs=epochs, max_pos=8, max_neg=8, max_unmatched=2,
                    out_dim=32, stance_dim=4, lr=lr, head_lr=head_lr, warmup_ratio=0.0, max_seq_length=32,
                    topic_max_seq_length=16, dropout=dropout)
    return train_mts(fit, folder, cfg, placement=resolve_placement("cpu", "fp32", threads=1, seed=13), quiet=True,
                     dev=dev)


def _held_map(folder, held):
    from argsim.backend import get_encoder
    from argsim.kpm.scoring import score_key_points
    from argsim.metrics.kpa_map import evaluate_map

    enc = get_encoder(str(folder), device="cpu")
    enc.configure(use_cache=False, quiet=True)
    return evaluate_map(score_key_points(held, enc), held)


def test_mts_training_raises_map_on_held_out_arguments(fit_and_held, tiny_bert, tmp_path):
    """Two epochs on three quarters of one ArgKP topic's arguments (a tiny random BERT backbone) raise the official
    mAP on the remaining quarter well above the same run at a learning rate of 0, the untrained network (which
    this assertion fails for)."""
    fit, held = fit_and_held
    zero_info = _tiny_mts(tiny_bert, tmp_path / "zero", fit, 0.0, 0.0, dropout=0.0)  # no head dropout: a figure
    info = _tiny_mts(tiny_bert, tmp_path / "tuned", fit, 3e-3, 1e-2, dropout=0.0)  # less at the mercy of the seed
    zero, tuned = _held_map(tmp_path / "zero", held), _held_map(tmp_path / "tuned", held)
    assert info["steps"] == zero_info["steps"] == 20
    assert info["epochs"][-1]["mean_loss"] < info["epochs"][0]["mean_loss"] < zero_info["epochs"][0]["mean_loss"]
    assert tuned.strict > zero.strict + 0.1, (zero, tuned)
    assert tuned.relaxed > zero.relaxed + 0.2, (zero, tuned)


def test_mts_keeps_the_epoch_with_the_best_dev_map(fit_and_held, tiny_bert, tmp_path):
    """With dev data the official strict mAP scores every epoch and the folder keeps the best one: at lr 1e-2 the
    first epoch is the best and the third the worst; the saved folder scores the first epoch's mAP again."""
    fit, held = fit_and_held
    info = _tiny_mts(tiny_bert, tmp_path / "m", fit, 1e-2, 3e-2, epochs=3, dev=held)
    strict = [row["dev_strict_map"] for row in info["dev"]]
    assert [row["epoch"] for row in info["dev"]] == [1, 2, 3] and strict[-1] < max(strict), info["dev"]
    assert info["best_epoch"] == 1 + strict.index(max(strict))
    kept = _held_map(tmp_path / "m", held)
    assert kept.strict == pytest.approx(max(strict), abs=1e-4)
    metrics = json.loads((tmp_path / "m" / "train_config.json").read_text())["metrics"]
    assert metrics["best_epoch"] == info["best_epoch"] and metrics["dev_strict_map"] == max(strict)


def test_keep_best_refuses_checkpoint_every_before_the_model(fit_and_held, tiny_bert, tmp_path, monkeypatch):
    """--keep-best scores each epoch: with --checkpoint-every N the selection would score every N steps and label
    them epochs, so the pair is refused in one line before the model loads, nothing written."""
    import argsim.trainers.mts as mts
    from argsim.errors import ArgsimError
    from argsim.kpm.mts.config import MTSConfig
    from argsim.training import Budget

    monkeypatch.setattr(mts, "_net", lambda *a: pytest.fail("the model loaded"))
    fit, held = fit_and_held
    with pytest.raises(ArgsimError, match="--keep-best scores each epoch .*; --checkpoint-every 5") as err:
        mts.train_mts(fit, tmp_path / "m", MTSConfig(model=str(tiny_bert)), dev=held, budget=Budget(checkpoint_every=5))
    assert "\n" not in str(err.value) and not (tmp_path / "m").exists()


def test_keep_best_needs_one_fold_and_an_evaluation_split(data_dir, tmp_path):
    from typer.testing import CliRunner

    from argsim.cli.app import app

    for extra, words in ((["--folds", "2"], "--folds 1"), (["--eval-split", ""], "evaluation split")):
        out = tmp_path / "never"
        res = CliRunner().invoke(app, ["train", "mts", "--keep-best", "--out", str(out), *extra])
        assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
        assert words in res.output and "--keep-best" in res.output and not out.exists()
