"""`load_dataset`: the datasets argsim reads, as pandas DataFrames (one row per record, documented columns); the
loaders of `argsim.data` read and validate them, this module only turns their records into frames.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pandas as pd

from argsim.config import SEED
from argsim.data.argkp import SPLITS as ARGKP_SPLITS
from argsim.data.argkp import load_argkp
from argsim.data.catalog import dataset_dir
from argsim.data.counterargs import SPLITS as COUNTER_SPLITS
from argsim.data.counterargs import load_counterargs
from argsim.data.poliinfo import NTCIR14_GOLD, load_ntcir14_items
from argsim.data.sick import SPLIT_FILES, load_sick
from argsim.data.wikipedia import load_articles
from argsim.errors import ArgsimError, did_you_mean
from argsim.thematic.build import first_test_triplets
from argsim.thematic.triplets import SPLITS as TRIPLET_SPLITS

#: the canonical names and their splits (None loads them all, with a `split` column)
SPLITS = {"argkp": ARGKP_SPLITS, "counterargs": COUNTER_SPLITS, "wikipedia": (), "wikipedia-triplets": TRIPLET_SPLITS,
          "poliinfo": NTCIR14_GOLD, "sick": tuple(SPLIT_FILES)}
#: accepted names -> the canonical one
ALIASES = {**{name: name for name in SPLITS}, "argkp-2021": "argkp", "kpm": "argkp", "counterargs18": "counterargs",
           "counterargs-18": "counterargs", "thematic": "wikipedia-triplets", "minutes": "poliinfo",
           "ntcir14": "poliinfo"}
ARGKP_COLUMNS = ["arg_id", "key_point_id", "topic", "stance", "argument", "key_point", "label"]


def load_dataset(name: str, split: str | None = None, data_dir: str | Path | None = None) -> pd.DataFrame:
    """One dataset (or one split of it) as a DataFrame.

    Args:
        name: Which dataset (aliases in brackets):

            - ``"argkp"``: ArgKP-2021 key point matching (Friedman et al. 2021), one row per labelled
              (argument, key point) pair: ``arg_id, key_point_id, topic, stance (+1 pro / -1 con), argument,
              key_point, label (1 match, 0 not), split``. Splits ``train``, ``dev`` (``test`` too when its files
              lie beside them); ``"train+dev"`` joins them. Every ArgKP argument has labelled pairs, so the
              frame holds the whole split (`KeyPointMatcher.evaluate` scores it with the official mAP).
            - ``"counterargs"`` (``counterargs-18``): counterargs-18 (Wachsmuth et al. 2018), one row per
              argument: ``id, split, theme, debate, stance, kind (point|counter), number, conclusion,
              premise, text, counter`` (a point's true counter's id; None for counters and unpaired points).
              Splits ``training``, ``validation``, ``test``.
            - ``"wikipedia"``: the Wikipedia articles of the thematic-similarity paper, one row per sentence:
              ``article, section, level, paragraph, sentence``.
            - ``"wikipedia-triplets"`` (``thematic``): the sentence triplets (Ein Dor et al. 2018) that
              `argsim data triplets wikipedia` builds with its defaults, built in memory: ``anchor, positive,
              negative, article, section, negative_article, negative_section, split``. Splits ``train``,
              ``dev``, ``test`` (by article, seed 13).
            - ``"poliinfo"`` (``minutes``): the NTCIR-14 QA Lab-PoliInfo summarization items with a gold
              summary (the items `argsim summarize minutes` summarises), one row per item: ``id, date,
              meeting, speaker, main_topic, sub_topic, start, end, length (character budget), summary,
              sentences (list of str), split``. Splits ``training``, ``single-testgs``, ``multi-testgs``.
            - ``"sick"``: SICK (Marelli et al. 2014), one row per sentence pair: ``pair_id, sentence_a,
              sentence_b, relatedness (1-5), entailment, split``. Splits ``train``, ``trial``, ``test``.
        split: One split; None: every split, the `split` column says which.
        data_dir: The dataset root (None: ``$ARGSIM_DATA``).

    Returns:
        A pandas DataFrame with the columns above.

    Example:
        >>> import argsim
        >>> dev = argsim.load_dataset("argkp", split="dev")
        >>> len(dev), int(dev["label"].sum()), dev["arg_id"].nunique(), dev["topic"].nunique()
        (3458, 738, 932, 4)
        >>> dev.columns.tolist()
        ['arg_id', 'key_point_id', 'topic', 'stance', 'argument', 'key_point', 'label', 'split']
    """
    key = ALIASES.get(str(name).lower())
    if key is None:
        raise ArgsimError(f"unknown dataset '{name}'{did_you_mean(name, ALIASES)}"
                          f": choose one of {', '.join(sorted(ALIASES))}")
    splits = SPLITS[key]
    if split is not None and not isinstance(split, str):
        raise ArgsimError(f"split {split!r}: give a split name (a string) or None for all")
    if split is not None and splits and key != "argkp" and split not in splits:
        raise ArgsimError(f"unknown split '{split}' of {key}{did_you_mean(str(split), splits)}"
                          f": choose one of {', '.join(splits)} (or None for all)")
    return _LOADERS[key]([split] if split else list(splits), data_dir)


def _argkp(splits: list[str], data_dir: str | Path | None) -> pd.DataFrame:
    return pd.concat([argkp_frame(load_argkp(part, data_dir)).assign(split=part)
                      for s in splits for part in s.split("+")], ignore_index=True)


def argkp_frame(data) -> pd.DataFrame:
    """The labelled pairs of a loaded ArgKP split (`KPMData`): arguments in the arguments file's order (the order
    the official mAP breaks ties in), each argument's pairs in the labels file's order."""
    by_arg: dict[str, list[tuple[str, int]]] = {}
    for (aid, kid), label in data.labels.items():
        by_arg.setdefault(aid, []).append((kid, label))
    return pd.DataFrame([(a.arg_id, kid, a.topic, a.stance, a.text, data.kp_by_id[kid].text, label)
                         for a in data.arguments for kid, label in by_arg.get(a.arg_id, [])], columns=ARGKP_COLUMNS)


def _counterargs(splits: list[str], data_dir: str | Path | None) -> pd.DataFrame:
    corpus = load_counterargs(data_dir)
    rows = [{**asdict(a), "counter": getattr(corpus.true_counter(a) if a.kind == "point" else None, "id", None)}
            for a in corpus.arguments if a.split in splits]
    return pd.DataFrame(rows, columns=["id", "split", "theme", "debate", "stance", "kind", "number", "conclusion",
                                       "premise", "text", "counter"])


def _wikipedia(splits: list[str], data_dir: str | Path | None) -> pd.DataFrame:
    rows = [(a.title, s.heading, s.level, pi, sent)
            for a in load_articles(dataset_dir("wikipedia", data_dir), quiet=True) for s in a.sections
            for pi, p in enumerate(s.paragraphs) for sent in p.sentences]
    return pd.DataFrame(rows, columns=["article", "section", "level", "paragraph", "sentence"])


def _wikipedia_triplets(splits: list[str], data_dir: str | Path | None) -> pd.DataFrame:
    folder = dataset_dir("wikipedia", data_dir)
    return pd.concat([pd.DataFrame(first_test_triplets(folder, None, SEED, s)).assign(split=s) for s in splits],
                     ignore_index=True)


def _poliinfo(splits: list[str], data_dir: str | Path | None) -> pd.DataFrame:
    folder = dataset_dir("poliinfo", data_dir)
    return pd.DataFrame([{**asdict(it), "sentences": list(it.sentences), "split": which}
                         for which in splits for it in load_ntcir14_items(folder, which)
                         if it.sentences and it.summary])  # the summarization benchmark (`ntcir14_gold_items`)


def _sick(splits: list[str], data_dir: str | Path | None) -> pd.DataFrame:
    folder = dataset_dir("sick", data_dir)
    rows = [asdict(p) for s in splits for p in load_sick(folder, s)]
    return pd.DataFrame(rows, columns=["pair_id", "sentence_a", "sentence_b", "relatedness", "entailment", "split"])


_LOADERS = {"argkp": _argkp, "counterargs": _counterargs, "wikipedia": _wikipedia,
            "wikipedia-triplets": _wikipedia_triplets, "poliinfo": _poliinfo, "sick": _sick}
