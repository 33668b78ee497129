"""`make gpu-check`: every trainer for a few steps and every encoder's inference on CUDA in the auto precision,
with their throughput against the CPU, into bench/results/gpu.json; any path that stays on the CPU fails loudly.

The trainers are the tiny runs of tests/training/test_train_interrupts.py (a 2-layer random BERT with MiniLM's
tokenizer, 16-d word vectors), each run on the CPU (fp32) and on CUDA (`--precision auto`: bf16 where the GPU has it); a
`TrainerCallback` records the device of every trainable parameter at every step, and CUDA's peak allocated
memory must grow during each CUDA run. The encoders are MiniLM and the folders the CUDA runs saved, each
encoding the same 256 sentences on both devices (no cache). Without CUDA it prints one line and exits 0, so the
target runs unattended anywhere. Exit code 1 with one line per failure otherwise.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results" / "gpu.json"
DEVICES = ("cpu", "cuda")


def _reset_peak() -> None:
    import torch

    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()


def _peak_mb() -> float:
    import torch

    return torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else 0.0


def tiny_assets(root: Path) -> dict[str, Path]:
    """The tiny BERT folder (sentence-transformers and transformers load it) and 16-d word vectors."""
    import numpy as np
    import torch
    from conftest import TOPICS
    from gensim.models import KeyedVectors
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import AutoTokenizer, BertConfig, BertModel

    from argsim.backend import model_path
    from argsim.backend.models import tokenize_en

    bert = root / "tiny-bert"
    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(str(model_path("minilm")))
    BertModel(BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                         intermediate_size=64, max_position_embeddings=128)).save_pretrained(str(bert))
    tokenizer.save_pretrained(str(bert))
    SentenceTransformer(modules=[Transformer(str(bert), max_seq_length=64), Pooling(32, "mean")],
                        device="cpu").save(str(bert))
    words = sorted({w for texts in TOPICS.values() for t in texts for w in tokenize_en(t)})
    kv = KeyedVectors(vector_size=16)
    kv.add_vectors(words, np.random.default_rng(0).normal(size=(len(words), 16)).astype(np.float32))
    kv.save_word2vec_format(str(root / "tiny.txt"))
    return {"bilstm": root / "tiny.txt", **dict.fromkeys(("mts", "bipolar", "minutes", "minilm", "sbert",
                                                          "sbert-top"), bert)}


def spy_devices(seen: set[str]) -> None:
    """Record the device of every trainable parameter at every step of every trainer."""
    from transformers import TrainerCallback

    import argsim.training.trainer as trainer_module

    real = trainer_module.run_trainer

    class Spy(TrainerCallback):
        def on_step_end(self, args, state, control, model=None, **kw):
            seen.update(p.device.type for p in model.parameters() if p.requires_grad)

    def run_trainer(trainer, *a, **kw):
        trainer.add_callback(Spy())
        return real(trainer, *a, **kw)

    trainer_module.run_trainer = run_trainer


def train_rows(root: Path, assets: dict[str, Path], failures: list[str]) -> list[dict]:
    import test_train_interrupts as tiny

    from argsim.training import resolve_placement

    rows = []
    for case, run in tiny.CASES.items():
        for device in DEVICES:
            tiny.PLACEMENT = resolve_placement(device, "auto", seed=5)
            seen: set[str] = set()
            spy_devices(seen)
            _reset_peak()
            began = time.perf_counter()
            steps = run(root / f"{case}-{device}", assets[case], False)
            seconds = time.perf_counter() - began
            peak = _peak_mb()
            rows.append({"trainer": case, "device": device, "precision": tiny.PLACEMENT.precision, "steps": steps,
                         "seconds": round(seconds, 2), "steps_per_s": round(steps / seconds, 2),
                         "parameters_on": sorted(seen), "cuda_peak_mb": round(peak, 1)})
            if device == "cuda" and (seen != {"cuda"} or peak == 0):
                failures.append(f"trainer {case}: parameters on {sorted(seen)}, CUDA peak {peak:.0f} MB")
    return rows


def encode_rows(root: Path, failures: list[str]) -> list[dict]:
    from conftest import TOPICS

    from argsim.backend import get_encoder

    texts = [t for texts in TOPICS.values() for t in texts] * 14  # 252 sentences
    rows = []
    models = ["minilm", *(str(root / f"{c}-cuda") for c in ("sbert", "minilm", "mts", "bilstm", "minutes"))]
    for model in models:
        for device in DEVICES:
            enc = get_encoder(model, device=device)
            enc.configure(use_cache=False, quiet=True)
            _reset_peak()
            began = time.perf_counter()
            enc.encode(texts)
            seconds = time.perf_counter() - began
            peak = _peak_mb()
            rows.append({"encoder": Path(model).name, "device": device, "sentences_per_s": round(len(texts) / seconds),
                         "cuda_peak_mb": round(peak, 1)})
            if device == "cuda" and peak == 0:
                failures.append(f"encoder {model}: nothing allocated on CUDA (it stayed on the CPU)")
    return rows


def main() -> int:
    import torch

    if not torch.cuda.is_available():
        print("gpu-check: skipped: no CUDA device here (torch.cuda.is_available() is False)")
        return 0
    sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "training")]
    from argsim.io import write_json
    from argsim.results import environment

    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        assets = tiny_assets(root)
        result = {"env": environment(), "gpu": torch.cuda.get_device_name(0),
                  "trainers": train_rows(root, assets, failures), "encoders": encode_rows(root, failures),
                  "failures": failures}
    write_json(RESULTS, result)
    print(json.dumps({k: result[k] for k in ("trainers", "encoders")}, indent=1))
    for line in failures:
        print(f"gpu-check: FAILED: {line}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
