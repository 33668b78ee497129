"""argsim: argument-similarity research toolkit (one CLI, one embedding backend, five papers)."""

import os

# Nothing in argsim may reach a model hub: everything is loaded from local paths.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

__version__ = "0.1.0"
