"""The paper's sentence network: word embeddings -> BiLSTM (300 per direction) -> attention (size 200) -> 600-d.

Attention as in Yang et al. (2016): u_t = tanh(W h_t + b), a_t = softmax(u_t . c), s = sum_t a_t h_t.
Saved folders (`save_model`) hold `argsim_encoder.json`, `config.json`, `vocab.txt` and `model.pt`, and load
through the backend: `get_encoder(folder)`. A "concatenation" folder (`save_concat`) joins several such models
(triplets-sen-titles = [triplets-sen ; triplets-titles]); it loads through `argsim.backend.concat`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import torch
from torch import nn

from argsim.backend.encoder import Encoder
from argsim.backend.fingerprint import fingerprint
from argsim.backend.models import tokenize_en
from argsim.backend.names import write_manifest
from argsim.backend.safety import load_torch_weights, model_files
from argsim.backend.static_words import cover_words
from argsim.errors import ModelError

PAD, UNK = 0, 1
MAX_TOKENS = 80


class AttentionBiLSTM(nn.Module):
    """BiLSTM + word attention over (frozen) pre-trained word vectors; output size 2 x hidden."""

    def __init__(self, vectors: np.ndarray, hidden: int = 300, attention: int = 200, dropout: float = 0.2) -> None:
        super().__init__()
        self.embedding = nn.Embedding.from_pretrained(torch.as_tensor(vectors, dtype=torch.float32),
                                                      freeze=True, padding_idx=PAD)
        self.lstm = nn.LSTM(vectors.shape[1], hidden, batch_first=True, bidirectional=True)
        self.dropout = nn.Dropout(dropout)
        self.project = nn.Linear(2 * hidden, attention)
        self.context = nn.Linear(attention, 1, bias=False)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        x = self.dropout(self.embedding(ids))
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        h, _ = self.lstm(packed)
        h, _ = nn.utils.rnn.pad_packed_sequence(h, batch_first=True, total_length=ids.shape[1])
        h = self.dropout(h)
        scores = self.context(torch.tanh(self.project(h))).squeeze(-1)
        scores = scores.masked_fill(ids == PAD, float("-inf"))
        weights = torch.softmax(scores, dim=1).unsqueeze(-1)
        return (weights * h).sum(dim=1)


def l1_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a - b).abs().sum(dim=-1)


def softmax_triplet_loss(d_pos: torch.Tensor, d_neg: torch.Tensor) -> torch.Tensor:
    """The paper's loss: softmax over (d+, d-), then |p(d+)| + |1 - p(d-)| (mean over the batch)."""
    p = torch.softmax(torch.stack([d_pos, d_neg], dim=-1), dim=-1)
    return (p[..., 0].abs() + (1 - p[..., 1]).abs()).mean()


class Vocabulary:
    """Word -> row of the embedding matrix (0 = padding, 1 = unknown)."""

    def __init__(self, words: list[str]) -> None:
        self.words = words
        self.index = {w: i + 2 for i, w in enumerate(words)}

    def batch(self, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
        seqs = [torch.tensor([self.index.get(t, UNK) for t in tokenize_en(text)[:MAX_TOKENS]] or [UNK])
                for text in texts]  # an empty text: one unknown token
        ids = nn.utils.rnn.pad_sequence(seqs, batch_first=True, padding_value=PAD)
        return ids, torch.tensor([len(s) for s in seqs])


def build_vocabulary(texts: list[str], keyed_vectors, top_words: int = 100_000) -> tuple[Vocabulary, np.ndarray]:
    """Words of `texts` known to the vectors plus the `top_words` most frequent vector words, and their matrix
    (static-model word vectors first compose the texts' words, `cover_words`; the `top_words` are whole words)."""
    tokens = [tokenize_en(text) for text in texts]
    cover_words(keyed_vectors, (t for toks in tokens for t in toks))
    index = keyed_vectors.key_to_index
    words = list(keyed_vectors.index_to_key[:min(top_words, getattr(keyed_vectors, "vocabulary_size", top_words))])
    words = list(dict.fromkeys(words + [t for toks in tokens for t in toks if t in index]))
    matrix = np.zeros((len(words) + 2, keyed_vectors.vector_size), dtype=np.float32)
    matrix[2:] = keyed_vectors.vectors[[index[w] for w in words]]
    return Vocabulary(words), matrix


def save_model(folder: Path, model: AttentionBiLSTM, vocab: Vocabulary, config: dict) -> Path:
    """Write a backend-loadable model folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, folder / "model.pt")
    (folder / "vocab.txt").write_text("\n".join(vocab.words) + "\n", encoding="utf-8")
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return write_manifest(folder, "thematic-bilstm").parent


def load_model(folder: Path) -> tuple[AttentionBiLSTM, Vocabulary, dict]:
    folder = Path(folder)
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        words = (folder / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
        state = load_torch_weights(folder / "model.pt")
    except (OSError, ValueError) as exc:
        raise ModelError(f"{folder}: not a thematic BiLSTM folder ({exc})") from None
    with model_files(folder, "thematic BiLSTM"):
        vectors = state["embedding.weight"].numpy()
        model = AttentionBiLSTM(vectors, config["hidden"], config["attention"], config["dropout"])
        model.load_state_dict(state)
    return model.eval(), Vocabulary(words), config


class BiLSTMEncoder(Encoder):
    """A trained thematic BiLSTM behind the backend's `Encoder` interface (600-d)."""

    chunk_batches = 4

    def __init__(self, folder: Path, device: str = "cpu", batch_size: int = 128) -> None:
        super().__init__()
        self.model, self.vocab, self.config = load_model(folder)
        self.device, self.batch_size = device, batch_size
        self.model.to(device)
        self.name = Path(folder).name
        self.identity = f"thematic-bilstm:{fingerprint(folder)}"

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        outs = []
        with torch.inference_mode():
            for start in range(0, len(texts), self.batch_size):
                ids, lengths = self.vocab.batch(texts[start:start + self.batch_size])
                outs.append(self.model(ids.to(self.device), lengths).float().cpu().numpy())
        return np.concatenate(outs, axis=0)


def load_encoder(folder: Path, device: str = "cpu", batch_size: int = 64, precision: str = "fp32") -> BiLSTMEncoder:
    """Backend loader named in `argsim_encoder.json`. The BiLSTM runs no transformer and computes in fp32 whatever
    `precision` asks (its `precision` says so)."""
    return BiLSTMEncoder(Path(folder), device=device, batch_size=max(batch_size, 128))


def save_concat(folder: Path, parts: dict[str, Path]) -> Path:
    """A folder that concatenates the given model folders (copied into `parts/<name>`), raw vectors joined
    (`argsim.backend.concat.save_composite`)."""
    from argsim.backend.concat import save_composite

    for name, src in parts.items():
        dst = Path(folder) / "parts" / name
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("checkpoint.pt", "checkpoints"))
    return save_composite(folder, list(parts), normalize_parts=False)
