"""The political Sentence-BERT (Shirafuji et al., Sec. 3.2-3.3) with the backbones available offline.

No Japanese BERT exists offline, so two backbones are offered:
- `ginza` (default): a sentence-transformers stack WordEmbeddings(GiNZA's 20,000 x 300 word2vec table)
  -> Pooling(mean) -> Dense(300 -> 300, initialised to the identity). Before training it equals the GiNZA
  document vector (cosine-wise); the dense layer and (optionally) the word vectors are trained. Texts are
  segmented with GiNZA's Sudachi tokenizer and each token is written as its vector row ("r123") before the
  model sees it, so the folder is a plain sentence-transformers model over space-separated row tokens;
  `argsim_encoder.json` makes `get_encoder(folder)` segment raw Japanese first.
- `minilm` or any sentence-transformers folder: fine-tuned as is (its uncased English WordPiece strips
  dakuten and maps many kanji to [UNK]; see docs/minutes.md).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from argsim.backend.encoder import Encoder
from argsim.backend.fingerprint import fingerprint

MANIFEST = {"loader": "minutes-sbert"}  # a name in argsim.backend.registry.ENCODER_LOADERS
SEGMENTED_MARKER = "argsim_segmented.json"


# ------------------------------------------------------------------ segmentation


def _ginza_nlp():  # noqa: ANN202 (spaCy Language)
    """GiNZA's pipeline, shared with the backend's `ginza` encoder (loaded once per process)."""
    from argsim.backend import get_encoder

    return get_encoder("ginza").nlp


def segment(texts: Sequence[str], batch_size: int = 256) -> list[str]:
    """Each text as the space-joined GiNZA vector rows of its Sudachi (split mode C) tokens: "r12 r7 ...".

    GiNZA keeps 20,000 distinct vectors for 480k words (words share rows), so the row ids are the model's
    vocabulary; tokens without a vector are dropped (GiNZA averages them as zeros: same direction).
    """
    nlp = _ginza_nlp()
    vectors, strings = nlp.vocab.vectors, nlp.vocab.strings
    out = []
    with nlp.select_pipes(enable=[]):
        for doc in nlp.pipe(texts, batch_size=batch_size):
            rows = (vectors.find(key=strings[t.orth_]) for t in doc if t.orth_.strip())
            out.append(" ".join(f"r{r}" for r in rows if r >= 0))
    return out


# ------------------------------------------------------------------ building


def build_ginza_model(update_embeddings: bool = True, dense: bool = True):  # noqa: ANN201 (SentenceTransformer)
    """WordEmbeddings(GiNZA's vector table, tokens "r<row>") -> mean pooling -> Dense(300, 300) = identity."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Dense, Pooling, WordEmbeddings
    from sentence_transformers.models.tokenizer import WhitespaceTokenizer

    table = np.asarray(_ginza_nlp().vocab.vectors.data, dtype=np.float32)
    vocab = ["PADDING_TOKEN"] + [f"r{i}" for i in range(len(table))]
    weights = np.concatenate([np.zeros((1, table.shape[1]), dtype=np.float32), table])
    tokenizer = WhitespaceTokenizer(vocab=vocab, stop_words=[], do_lower_case=False)
    emb = WordEmbeddings(tokenizer=tokenizer, embedding_weights=weights, update_embeddings=update_embeddings,
                         max_seq_length=512)
    dim = emb.get_embedding_dimension()
    modules = [emb, Pooling(dim, pooling_mode="mean")]
    if dense:
        layer = Dense(dim, dim, bias=True, activation_function=torch.nn.Identity())
        with torch.no_grad():
            layer.linear.weight.copy_(torch.eye(dim))
            layer.linear.bias.zero_()
        modules.append(layer)
    return SentenceTransformer(modules=modules, device="cpu")


def mark_segmented(folder: str | Path) -> None:
    """Write the argsim manifest: `get_encoder(folder)` will segment raw text before encoding."""
    folder = Path(folder)
    (folder / "argsim_encoder.json").write_text(json.dumps(MANIFEST), encoding="utf-8")
    (folder / SEGMENTED_MARKER).write_text(json.dumps({"segmenter": "ginza-sudachi-C", "tokens": "r<vector row>"}),
                                           encoding="utf-8")


# ------------------------------------------------------------------ the backend encoder


class SegmentedSentenceTransformerEncoder(Encoder):
    """A sentence-transformers model over Sudachi tokens: raw Japanese in, vectors out."""

    def __init__(self, folder: str | Path, device: str = "cpu", batch_size: int = 64, precision: str = "fp32") -> None:
        super().__init__()
        from sentence_transformers import SentenceTransformer

        from argsim.backend.device import cast_for_inference

        self.folder = Path(folder)
        self.model = cast_for_inference(SentenceTransformer(str(self.folder), device=device, local_files_only=True),
                                        precision)
        self.name, self.device, self.batch_size, self.precision = self.folder.name, device, batch_size, precision
        self.identity = f"minutes-sbert:{fingerprint(self.folder)}"

    def _encode_batch(self, texts: list[str]) -> np.ndarray:
        vecs = self.model.encode(segment(texts), batch_size=self.batch_size, convert_to_numpy=True,
                                 show_progress_bar=False)
        return vecs.astype(np.float32, copy=False)


def load_encoder(folder: str | Path, device: str = "cpu", batch_size: int = 64, precision: str = "fp32") -> Encoder:
    """Loader named in `argsim_encoder.json`."""
    return SegmentedSentenceTransformerEncoder(folder, device=device, batch_size=batch_size, precision=precision)
