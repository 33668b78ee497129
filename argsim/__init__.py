"""argsim: argument-similarity research toolkit (one CLI, one embedding backend, five papers).

Importing argsim changes nothing global: offline use (HF_HUB_OFFLINE=1) is the environment's choice (the Makefile
and the tests set it); the `argsim` command itself sets TOKENIZERS_PARALLELISM=false unless it is set.
"""

__version__ = "0.1.0"
