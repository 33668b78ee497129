"""How well can each offline backbone even read Japanese? The figures behind the backbone choice (docs/minutes.md,
"The political Sentence-BERT"): MiniLM's [UNK] rate and the characters its accent-stripping normaliser changes
(voiced kana lose their mark), and GiNZA's share of Sudachi tokens without a word vector.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence


def minilm_tokenizer_report(texts: Sequence[str]) -> dict[str, float]:
    """Unknown-token rate and accent-stripping damage of MiniLM's WordPiece tokenizer on `texts`."""
    from transformers import AutoTokenizer

    from argsim.backend import model_path
    from argsim.backend.safety import HF_LOAD

    tok = AutoTokenizer.from_pretrained(str(model_path("minilm")), **HF_LOAD)
    normalizer = tok.backend_tokenizer.normalizer if getattr(tok, "backend_tokenizer", None) else None
    n_tok = n_unk = n_chars = n_changed = n_voiced = n_voiced_changed = 0
    for text in texts:
        ids = tok(text, add_special_tokens=False)["input_ids"]
        n_tok += len(ids)
        n_unk += sum(1 for i in ids if i == tok.unk_token_id)
        for ch in text:
            if ch.isspace():
                continue
            n_chars += 1
            normed = normalizer.normalize_str(ch) if normalizer else tok.basic_tokenizer._run_strip_accents(ch)
            changed = normed.strip() != ch.lower()
            n_changed += changed
            if len(unicodedata.normalize("NFD", ch)) > 1 and "\u3040" <= ch <= "\u30ff":
                n_voiced += 1
                n_voiced_changed += changed
    return {"texts": len(texts), "tokens": n_tok, "unk_rate": n_unk / max(n_tok, 1),
            "chars_changed_by_normaliser": n_changed / max(n_chars, 1), "voiced_kana_share": n_voiced / max(n_chars, 1),
            "voiced_kana_damaged": n_voiced_changed / max(n_voiced, 1),
            "example": " ".join(tok.tokenize(texts[0])) if texts else ""}


def ginza_oov_report(texts: Sequence[str]) -> dict[str, float]:
    """Share of Sudachi tokens (punctuation excluded) that have no GiNZA word vector."""
    from argsim.backend import get_encoder
    from argsim.io import pipe_docs

    nlp = get_encoder("ginza").nlp
    n = oov = 0
    with nlp.select_pipes(enable=[]):
        for doc in pipe_docs(nlp, texts, batch_size=256):
            words = [t for t in doc if not (t.is_punct or t.is_space)]
            n += len(words)
            oov += sum(not t.has_vector for t in words)
    return {"texts": len(texts), "tokens": n, "oov_rate": oov / max(n, 1)}
