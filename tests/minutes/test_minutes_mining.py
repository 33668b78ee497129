"""Mining rules on hand-written utterances: cleaning, positives, negatives, thresholds, split by meeting."""

from __future__ import annotations

import numpy as np

from argsim.data.poliinfo import Meeting, Utterance
from argsim.minutes.mining import Line, MiningConfig, corpus_lines, mine_triplets, split_meetings
from argsim.minutes.text import clean_lines, split_lines, strip_noise


def _meeting(mid: str, date: str, utts: list[tuple[str, str]]) -> Meeting:
    m = Meeting(mid, "委員会", date, "", "hand")
    m.utterances = [Utterance(mid, date, s, t, "委員会", i) for i, (s, t) in enumerate(utts)]
    return m


def test_noise_and_wrapped_lines_are_cleaned():
    assert strip_noise("ありがとうございました。（拍手）") == "ありがとうございました。"
    assert strip_noise("\u3000\u3000\u3000〔「異議なし」と呼ぶ者あり〕") == ""
    assert strip_noise("○議長（石川良一君）ただいまから会議を開きます。") == "ただいまから会議を開きます。"
    assert strip_noise("――") == ""
    assert split_lines("これにご異議ありません\nか。\n\u3000次に移ります。") == ["これにご異議ありませんか。",
                                                                       "\u3000次に移ります。"]
    assert clean_lines("短い。\n\u3000十分に長い一文でございます。", min_chars=8) == ["十分に長い一文でございます。"]


def test_roll_block_and_boilerplate_are_dropped():
    utts = [("null", "出席委員　十名\n一番山田君\n"), ("委員長", "それでは、そのようにいたします。\n")]
    meetings = [_meeting(f"m{i}", f"2012-01-0{i + 1}", utts + [("佐藤委員", f"第{i}の質問について詳しく伺います。\n")])
                for i in range(3)]
    texts = [x.text for x in corpus_lines(meetings, min_chars=5, boilerplate_min_count=3)]
    assert texts == [f"第{i}の質問について詳しく伺います。" for i in range(3)]
    kept = [x.text for x in corpus_lines(meetings, min_chars=5, boilerplate_min_count=0)]
    assert kept.count("それでは、そのようにいたします。") == 3


def test_positive_is_next_line_of_same_speaker_above_threshold():
    lines = [Line("A", "d1", "佐藤", "t0"), Line("A", "d1", "佐藤", "t1"), Line("A", "d1", "鈴木", "t2"),
             Line("A", "d1", "鈴木", "t3"), Line("B", "d2", "田中", "n0"), Line("B", "d2", "田中", "n1")]
    v = np.array([[1, 0, 0], [0.9, 0.1, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [0.1, 0, 1]], dtype=np.float32)
    splits = {"A": "train", "B": "train"}
    trips, stats = mine_triplets(lines, v, MiningConfig(seed=1), splits)
    pairs = {(t["anchor"], t["positive"]) for t in trips}
    # t0->t1 same speaker, cos 0.99; t1->t2 other speaker; t2->t3 cos 0 < 0.5; t3->n0 other meeting;
    # n0->n1 same speaker, cos 0.995
    assert pairs == {("t0", "t1"), ("n0", "n1")}
    assert stats["other speaker"] == 1 and stats["positive below threshold"] == 1
    for t in trips:  # negatives come from the other meeting and respect the 0.9 ceiling
        assert t["negative_meeting"] != t["meeting"] and t["cos_neg"] <= 0.9
    # a stricter positive threshold (0.995) drops t0->t1 (cos 0.9939) and keeps n0->n1 (cos 0.9950)
    strict, _ = mine_triplets(lines, v, MiningConfig(pos_threshold=0.995, seed=1), splits)
    assert {(t["anchor"], t["positive"]) for t in strict} == {("n0", "n1")}


def test_negative_threshold_and_seeded_draws():
    lines = [Line("A", "d1", "s", "a0"), Line("A", "d1", "s", "a1"), Line("B", "d2", "x", "near"),
             Line("C", "d3", "y", "far")]
    v = np.array([[1, 0], [1, 0.1], [1, 0.05], [0, 1]], dtype=np.float32)
    splits = {"A": "train", "B": "train", "C": "train"}
    trips, _ = mine_triplets(lines, v, MiningConfig(seed=3), splits)
    assert [t["negative"] for t in trips] == ["far"]  # 'near' has cosine 0.999 > 0.9
    again, _ = mine_triplets(lines, v, MiningConfig(seed=3), splits)
    assert again == trips
    none, stats = mine_triplets(lines, v, MiningConfig(neg_threshold=-0.5, max_draws=20, seed=3), splits)
    assert none == [] and stats["no negative found"] == 1


def test_split_is_by_meeting_and_deterministic():
    sizes = {f"m{i}": 10 for i in range(50)}
    s1, s2 = split_meetings(sizes, seed=5), split_meetings(sizes, seed=5)
    assert s1 == s2 and set(s1) == set(sizes)
    counts = {k: sum(1 for v in s1.values() if v == k) for k in ("train", "dev", "test")}
    assert counts == {"train": 40, "dev": 5, "test": 5}


def test_mining_real_ginza_on_example_minutes(tmp_path):
    from argsim.data.poliinfo import load_meetings
    from argsim.minutes.mining import mine_minutes
    from tests.conftest import FIXTURES

    meetings = load_meetings(tmp_path, files=[FIXTURES / "minutes" / "minutes.json"])
    # two meetings: put them in one split so negatives can be drawn across meetings
    summary = mine_minutes(meetings, tmp_path, MiningConfig(fractions=(1.0, 0.0, 0.0), boilerplate_min_count=0))
    rows = [line for line in (tmp_path / "train.jsonl").read_text(encoding="utf-8").splitlines() if line]
    assert summary["counts"]["triplets"] == len(rows) >= 2
    assert all("拍手" not in r and "異議なし" not in r for r in rows)
    import json

    first = json.loads(rows[0])
    assert first["anchor"].startswith("首都直下地震") and first["positive"].startswith("一斉帰宅")
    assert first["negative_meeting"] != first["meeting"] and first["cos_pos"] >= 0.5
