"""The LTR rankers (section 3.2, appendix B.1): `argsim rank counterargs --method logreg-part|xgboost-full|...`,
by the exact bound-and-prune search over linear (`argsim.counter.lexical.prune`) or tree scores (`cascade`);
`prune=none` scores every pair exactly (XGBoost through the on-disk feature cache)."""

from __future__ import annotations

from pathlib import Path

from argsim.counter.core.registry import ScoreDict, register_ranker
from argsim.counter.lexical.feature_cache import pool_features
from argsim.counter.lexical.features import FeatureConfig, FeatureSpace
from argsim.counter.lexical.prune import MODES, linear_scores
from argsim.counter.ltr.cascade import tree_scores
from argsim.counter.ltr.model import LTR_METHODS, LTRModel
from argsim.counter.ltr.training import MODELS_DIR
from argsim.engine.base import Engine, LocalEngine
from argsim.errors import ArgsimError, check_choice
from argsim.paths import under_workdir


def _ltr_ranker(method: str):
    def rank(points, pools, model: str | None = None, setting: str | None = None, prune: str = "top",
             gold: dict | None = None, top_k: int = 10, engine: Engine | None = None, **_):
        check_choice(prune, f"{method} prune mode", MODES)  # before the model loads, as simple-sd's
        if not model and (not setting or setting == "user"):
            raise ArgsimError(f"{method}: pass --model <folder of a model from `argsim train ltr`>")
        folder = Path(model) if model else under_workdir(MODELS_DIR) / setting / method
        if not model and not folder.is_dir():
            raise ArgsimError(f"{method}: no trained model at {folder}; run `argsim train ltr --setting {setting}` "
                              "or pass --model")
        ltr, meta = LTRModel.load(folder)
        # models saved before the stop-word option kept every token
        config = FeatureConfig.from_dict({"stopwords": "none"} | (meta.get("features_config") or {}))
        if ltr.model == "xgboost" and prune == "none":
            feats = pool_features(points, pools, config, ltr.n_features, engine=engine)
            return ScoreDict({p.id: ltr.decision_function(feats[p.id]) for p in points}, exact_rank=True)
        space = FeatureSpace(points, pools, config, executor=engine or LocalEngine())
        search = {"gold": gold if prune == "rank" else None, "mode": prune, "top_k": top_k, "description": method}
        scores, stats = (linear_scores(space, ltr.linear_weights(), **search) if ltr.model == "logreg"
                         else tree_scores(space, ltr, **search))
        return ScoreDict(scores, exact_rank=prune in ("rank", "none"), stats=stats.__dict__)

    return rank


for _m in LTR_METHODS:
    register_ranker(_m, help=f"{_m.replace('-', ' on ')} features (trained by `argsim train ltr`; opt "
                             "model=<folder>, prune=top|rank|none)")(_ltr_ranker(_m))

