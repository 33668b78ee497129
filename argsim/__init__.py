"""argsim: argument-similarity research toolkit (one CLI, one embedding backend, five papers).

Importing argsim changes no environment variable that decides where models come from: offline use
(HF_HUB_OFFLINE=1) is the environment's choice (the Makefile and the tests set it).
"""

import os

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

__version__ = "0.1.0"
