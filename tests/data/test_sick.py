"""The SICK loader on the real SemEval-2014 files and on malformed input."""

from __future__ import annotations

import pytest

from argsim.data.sick import check, load_sick, load_sick_full
from argsim.errors import InputError


def test_real_splits(data_dir):
    folder = data_dir / "sick"
    train, test = load_sick(folder, "train"), load_sick(folder, "test")
    assert len(train) == 4500 and len(test) == 4927 and len(load_sick(folder, "trial")) == 500
    first = train[0]
    assert first.pair_id == 1 and first.relatedness == 4.5 and first.entailment == "NEUTRAL"
    assert first.sentence_a.startswith("A group of kids is playing in a yard")
    assert not any(p.sentence_b.endswith("\r") for p in test)  # the CRLF test file is read cleanly


def test_full_release_and_check(data_dir):
    folder = data_dir / "sick"
    full = load_sick_full(folder)
    assert len(full) == 9840 and {p.split for p in full} == {"train", "trial", "test"}
    stats = check(folder)
    assert all(s.ok for s in stats if s.expected is not None), [(s.name, s.value) for s in stats if not s.ok]


def test_malformed_rows_name_file_and_row(tmp_path):
    header = "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"
    (tmp_path / "SICK_train.txt").write_text(header + "1\ta\tb\t4.5\tNEUTRAL\n2\ta\tb\tlots\tNEUTRAL\n",
                                             encoding="utf-8")
    with pytest.raises(InputError, match=r"SICK_train.txt.*row 3"):
        load_sick(tmp_path, "train")
    # a blank line is skipped but still counted: the bad row is named by its line in the file
    (tmp_path / "SICK_train.txt").write_text(header + "1\ta\tb\t4.5\tNEUTRAL\n\n2\ta\tb\t9\tNEUTRAL\n",
                                             encoding="utf-8")
    with pytest.raises(InputError, match=r"SICK_train.txt.*row 4.*outside 1-5"):
        load_sick(tmp_path, "train")
    (tmp_path / "SICK_trial.txt").write_text(header + "1\ta\tb\t4.5\n", encoding="utf-8")
    with pytest.raises(InputError, match="4 fields"):
        load_sick(tmp_path, "trial")
    with pytest.raises(InputError, match="not found"):
        load_sick(tmp_path, "test")
