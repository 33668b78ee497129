"""Score every argument against the key points of its topic and stance (cosine of backend embeddings; a
cross-encoder's probability, `cross_predictions`).

Any backend `Encoder` works (zero-shot models, fine-tuned SBERT folders). Encoders that take the context
(topic and stance) as separate inputs, like MTS, expose `encode_statements(texts, topics, stances, engine)`;
plain encoders embed the text alone, optionally formatted with a template such as "{topic} {text}".

Engines (`--engine ray`): the embedding is the bulk of the work and goes through `argsim.engine.encode` (what
the cache lacks is embedded on Ray's actor pool and merged into the cache). The scoring itself stays in this
process on every engine: it is one small matrix-vector product per argument (ArgKP dev: 932 arguments, 4,211
pairs, 0.05 s of CPU in all), less than shipping the vectors to a worker would cost.
"""

from __future__ import annotations

import json
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from argsim.backend import Encoder
from argsim.data.argkp import KPMData
from argsim.engine import Engine, encode
from argsim.errors import ArgsimError, check_choice
from argsim.io import read_json_as, topic_key
from argsim.vectors import l2_normalize

Predictions = dict[str, dict[str, float]]


TEMPLATE_FIELDS = ("text", "topic", "stance")


def check_template(template: str, option: str = "template") -> str:
    """`template` if every replacement field in it is a plain `{name}` of `TEMPLATE_FIELDS` and `{text}` is one of
    them, else ArgsimError (one line).

    Parsed with `string.Formatter`: attribute or index access (`{topic.__class__}`, `{text[0]}`), conversions
    (`!r`), nested fields in a format spec, unknown names and unbalanced braces are refused before anything is
    formatted, so a template can only place the statement's own strings. `{{` and `}}` stay literal braces.

    Args:
        template: e.g. "{topic}: {text}".
        option: how messages name it (e.g. '--kp-template').

    Returns:
        `template` unchanged.

    Example:
        >>> check_template("{topic} | {text}")
        '{topic} | {text}'
    """
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ArgsimError(f"{option} {template!r}: {exc}") from None
    allowed = ", ".join("{" + f + "}" for f in TEMPLATE_FIELDS)
    for _literal, name, spec, conversion in parts:
        if name is None:
            continue
        if name not in TEMPLATE_FIELDS or conversion is not None or (spec and ("{" in spec or "}" in spec)):
            shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            raise ArgsimError(f"{option} {template!r}: {shown} is not a plain field; use {allowed}")
        try:
            format("x", spec)
        except ValueError as exc:
            raise ArgsimError(f"{option} {template!r}: format spec {spec!r} of {{{name}}}: {exc}") from None
    if not any(name == "text" for _literal, name, _spec, _conv in parts):
        raise ArgsimError(f"{option} {template!r}: no {{text}} field, so every statement of one topic and stance "
                          "would be the same text (and score alike); e.g. '{topic}: {text}'")
    return template


def embed_statements(encoder: Encoder, texts: Sequence[str], topics: Sequence[str], stances: Sequence[int],
                     template: str = "{text}", engine: Engine | None = None) -> np.ndarray:
    """L2-normalised embeddings of statements in their context (topic, stance), embedded on `engine` (None:
    this process)."""
    if (contextual := getattr(encoder, "encode_statements", None)) is not None:
        vecs = contextual(list(texts), list(topics), list(stances), engine=engine)
    else:
        check_template(template)
        formatted = [template.format(text=t, topic=tp, stance="pro" if s > 0 else "con")
                     for t, tp, s in zip(texts, topics, stances, strict=True)]
        vecs = encode(engine, encoder, formatted)
    return l2_normalize(vecs).astype(np.float32)


def score_key_points(data: KPMData, encoder: Encoder, arg_template: str = "{text}",
                     kp_template: str = "{text}", engine: Engine | None = None) -> Predictions:
    """`{arg_id: {kp_id: cosine}}` for every argument and each key point of the same topic and stance; the
    embedding runs on `engine` (None: this process), the scoring here (see the module docstring)."""
    args, kps = data.arguments, data.key_points
    if not kps:
        raise ArgsimError(f"{data.name}: no key points to score against")
    a_vec, k_vec = (embed_statements(encoder, [x.text for x in xs], [x.topic for x in xs], [x.stance for x in xs],
                                     template, engine) for xs, template in ((args, arg_template), (kps, kp_template)))
    kp_row = {k.kp_id: i for i, k in enumerate(kps)}
    out: Predictions = {}
    for i, arg in enumerate(args):
        if not (cands := data.candidates(arg)):
            continue
        sims = k_vec[[kp_row[k.kp_id] for k in cands]] @ a_vec[i]
        out[arg.arg_id] = {k.kp_id: round(float(s), 6) for k, s in zip(cands, sims, strict=True)}
    return out


CONTEXTS = ("none", "topic", "topic-stance")
CROSS_INFO = "argsim_kpm_cross.json"  # a key point cross-encoder folder's input format (context, sep, max_length)
ST_CONFIG = "config_sentence_transformers.json"


def format_argument(text: str, topic: str, stance: int, context: str, sep: str = "[SEP]") -> str:
    """The argument side of a pair: the text alone, or preceded by the topic (and stance) and separators."""
    check_choice(context, "context", CONTEXTS)
    before = {"none": [], "topic": [topic], "topic-stance": [topic, "pro" if stance > 0 else "con"]}[context]
    return f" {sep} ".join([*before, text])


def is_cross_encoder(name: str | Path) -> bool:
    """True for a folder that sentence-transformers saved as a CrossEncoder (its config's model_type), or a
    `CrossEncoder` object."""
    if not isinstance(name, (str, Path)):
        from argsim.backend.resolve import is_cross_encoder_object

        return is_cross_encoder_object(name)
    return json_key(Path(name).expanduser() / ST_CONFIG, "model_type") == "CrossEncoder"


def json_key(path: Path, key: str) -> Any:
    """`key` of the JSON object in the file `path`; None when the file is missing, unreadable or no object."""
    try:
        return json.loads(path.read_text(encoding="utf-8")).get(key) if path.is_file() else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        return None


def cross_predictions(data: KPMData, model: Any, config: Any = None, context: str | None = None,
                      sep: str | None = None) -> Predictions:
    """`{arg_id: {kp_id: P(match)}}` of a key point cross-encoder (the backend's one pair scorer's probability,
    `argsim.backend.resolve.PairScorer`) over every argument and each key point of its topic and stance, the argument
    first, in the input format it was trained on.

    Args:
        data: the arguments and key points.
        model: a saved cross-encoder folder (loaded once per process through the model cache,
            `argsim.backend.resolve.pair_scorer`, in the run's device, precision and runtime) or a `CrossEncoder`
            object.
        config: the run options (`RunConfig`; None: the defaults, quiet).
        context, sep: the argument side's format and separator (None: the folder's `argsim_kpm_cross.json`, else
            ``"none"`` and the tokenizer's own separator).

    Returns:
        The predictions, probabilities to 6 decimals."""
    from argsim.backend.resolve import PairScorer, pair_scorer
    from argsim.schemas import KpmCrossInfo

    meta: dict = {}
    if isinstance(model, (str, Path)):
        info = Path(model) / CROSS_INFO
        meta = read_json_as(KpmCrossInfo, info) if info.is_file() else {}
        scorer = pair_scorer(model, config, meta.get("max_length"))
    else:
        scorer = PairScorer(model, name="CrossEncoder")
    context, sep = context or meta.get("context", "none"), sep or meta.get("sep") or scorer.model.tokenizer.sep_token
    keys = [(a, k) for a in data.arguments for k in data.candidates(a)]
    if not keys:
        raise ArgsimError(f"{data.name}: no argument has a key point of its topic and stance to score")
    pairs = [(format_argument(a.text, a.topic, a.stance, context, sep or "[SEP]"), k.text) for a, k in keys]
    out: Predictions = {}
    show = config is not None and not config.quiet
    for (a, k), s in zip(keys, scorer.probability(pairs, show_progress=show), strict=True):
        out.setdefault(a.arg_id, {})[k.kp_id] = round(float(s), 6)
    return out


@dataclass
class BestMatch:
    arg_id: str
    argument: str
    topic: str
    stance: int
    key_point_id: str
    key_point: str
    score: float
    matched: bool = True  # score >= the model's threshold: the key point fits; False: no key point fits


def best_matches(data: KPMData, predictions: Predictions, threshold: float | None = None) -> list[BestMatch]:
    """Each argument's highest-scoring key point (first on ties), in the arguments file's order, and whether it
    fits: `matched` when its score >= `threshold` (None: every best key point counts). An argument below the
    threshold keeps its best key point and score for inspection, but matches no key point."""
    out = []
    for arg in data.arguments:
        if scores := predictions.get(arg.arg_id):
            kp_id = max(scores, key=scores.__getitem__)
            out.append(BestMatch(arg.arg_id, arg.text, arg.topic, arg.stance, kp_id, data.kp_by_id[kp_id].text,
                                 scores[kp_id], threshold is None or scores[kp_id] >= threshold))
    return out


@dataclass
class Coverage:
    key_point_id: str
    key_point: str
    topic: str
    stance: int
    matched: int  # arguments whose best key point this is, with score >= threshold
    arguments: int  # arguments of the same topic and stance
    share: float


def coverage(data: KPMData, matches: list[BestMatch], threshold: float) -> list[Coverage]:
    """Per key point: how many arguments it matches (their best key point, score >= threshold: the model's own,
    `argsim.kpm.threshold`), KPA's summary."""
    per_group = Counter((topic_key(a.topic), a.stance) for a in data.arguments)
    counts = Counter(m.key_point_id for m in matches if m.score >= threshold)
    rows = []
    for kp in data.key_points:
        n, c = per_group[(topic_key(kp.topic), kp.stance)], counts[kp.kp_id]
        rows.append(Coverage(kp.kp_id, kp.text, kp.topic, kp.stance, c, n, round(c / n, 4) if n else 0.0))
    rows.sort(key=lambda r: (r.topic, -r.stance, -r.matched))
    return rows
