"""The one embedding backend: every method gets its vectors and models from here."""

from argsim.backend.device import resolve_device
from argsim.backend.encoder import Encoder
from argsim.backend.registry import (
                                     DEFAULT_MODEL,
                                     MODELS,
                                     get_encoder,
                                     load_sentence_transformer,
                                     load_transformer,
                                     load_word_vectors,
                                     model_path,
)

__all__ = ["DEFAULT_MODEL", "MODELS", "Encoder", "get_encoder", "load_sentence_transformer",
           "load_transformer", "load_word_vectors", "model_path", "resolve_device"]
