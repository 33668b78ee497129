"""ArgKP-2021 loader: real counts from SOURCE.md, and errors that name file, row and column."""

from __future__ import annotations

from pathlib import Path

import pytest

from argsim.data.argkp import kpm_data, load_argkp, split_stats
from argsim.errors import InputError

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "kpm"


def test_dev_split_matches_source_md(data_dir):
    dev = load_argkp("dev", data_dir)
    s = split_stats(dev)
    assert (s["topics"], s["arguments"], s["pro"], s["con"]) == (4, 932, 472, 460)
    assert (s["key points"], s["labels"], s["positives"]) == (36, 3458, 738)
    assert s["same topic+stance pairs"] == 4211
    arg = dev.arguments[0]
    assert arg.arg_id == "arg_4_0" and arg.stance == -1
    assert all(k.topic == arg.topic and k.stance == arg.stance for k in dev.candidates(arg))


def test_catalog_check_all_figures_ok(data_dir):
    from argsim.data.catalog import check_dataset

    stats = check_dataset("argkp", data_dir)
    assert len(stats) == 18 and all(s.ok for s in stats)


def test_subset_keeps_only_those_topics(data_dir):
    dev = load_argkp("dev", data_dir)
    sub = dev.subset(dev.topics[:1])
    assert sub.topics == dev.topics[:1]
    assert {a.topic for a in sub.arguments} == {k.topic for k in sub.key_points} == set(dev.topics[:1])
    assert all(a in sub.arg_by_id for a, _ in sub.labels)


def _copy(tmp_path: Path, name: str, edit) -> Path:
    lines = (FIX / name).read_text().splitlines()
    out = tmp_path / name
    out.write_text("\n".join(edit(lines)) + "\n")
    return out


def test_bad_stance_names_row_and_column(tmp_path):
    args = _copy(tmp_path, "arguments.csv", lambda ls: ls[:3] + [ls[3].replace(",1", ",pro")] + ls[4:])
    with pytest.raises(InputError) as err:
        kpm_data(args, FIX / "key_points.csv")
    assert "arguments.csv, row 4, column 'stance'" in str(err.value) and "'pro'" in str(err.value)


def test_duplicate_ids_and_unknown_label_ids(tmp_path):
    kps = _copy(tmp_path, "key_points.csv", lambda ls: ls + [ls[1]])
    with pytest.raises(InputError, match=r"row 6, column 'key_point_id'.*duplicate key_point_id 'k1'"):
        kpm_data(FIX / "arguments.csv", kps)
    labels = _copy(tmp_path, "labels.csv", lambda ls: ls + ["zz,k1,1"])
    with pytest.raises(InputError, match=r"labels.csv, row 17, column 'arg_id'.*'zz' is not in the arguments"):
        kpm_data(FIX / "arguments.csv", FIX / "key_points.csv", labels)


def test_label_values_and_missing_columns(tmp_path):
    labels = _copy(tmp_path, "labels.csv", lambda ls: ls[:2] + ["a1,k2,yes"] + ls[3:])
    with pytest.raises(InputError, match=r"row 3, column 'label'.*must be 0 or 1"):
        kpm_data(FIX / "arguments.csv", FIX / "key_points.csv", labels)
    args = _copy(tmp_path, "arguments.csv", lambda ls: [ls[0].replace("stance", "side")] + ls[1:])
    with pytest.raises(InputError, match="missing column.*stance"):
        kpm_data(args, FIX / "key_points.csv")


def test_missing_split_is_a_clear_error(data_dir):
    with pytest.raises(InputError, match="split 'test' not found: missing arguments_test.csv"):
        load_argkp("test", data_dir)
