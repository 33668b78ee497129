"""The one embedding backend: every method gets its vectors and models from here."""

from argsim.backend.device import resolve_device
from argsim.backend.encoder import Encoder
from argsim.backend.folders import load_transformer, model_path
from argsim.backend.names import DEFAULT_MODEL, MODELS
from argsim.backend.registry import get_cross_encoder, get_encoder, load_sentence_transformer
from argsim.backend.words import load_word_vectors

__all__ = ["DEFAULT_MODEL", "MODELS", "Encoder", "get_cross_encoder", "get_encoder", "load_sentence_transformer",
           "load_transformer", "load_word_vectors", "model_path", "resolve_device"]
