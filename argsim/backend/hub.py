"""`--model` also takes a Hugging Face model id (e.g. `FacebookAI/roberta-base`), resolved through the local Hugging
Face cache (huggingface_hub's layout under $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub). It is
downloaded only where the environment allows it: with HF_HUB_OFFLINE set (the Makefile and the tests set it; argsim
itself never does) a missing id is one line and exit 2.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from argsim.errors import ModelError, did_you_mean

_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")


def looks_like_hub_id(name: str) -> bool:
    return bool(_ID.match(name)) and not name.endswith((".", "-")) and ".." not in name


def resolve_hub_model(model_id: str) -> Path:
    """The local snapshot folder of `model_id` (downloading it unless HF_HUB_OFFLINE is set)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    # the cache folder huggingface_hub uses, read from the environment now (not at import time)
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface")
    cache = Path(os.environ.get("HF_HUB_CACHE") or Path(home) / "hub").expanduser()
    offline = os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    try:
        return Path(snapshot_download(repo_id=model_id, cache_dir=str(cache), local_files_only=offline))
    except LocalEntryNotFoundError:
        from argsim.backend.names import known_names

        hint = did_you_mean(model_id, known_names())
        raise ModelError(f"unknown model '{model_id}'{hint}: not an argsim name, a local folder, nor a model in the "
                         f"local Hugging Face cache ({cache}); HF_HUB_OFFLINE is set, so nothing was downloaded "
                         f"(`hf download {model_id}` where the network is allowed)") from None
    except (HfHubHTTPError, OSError, ValueError) as exc:
        raise ModelError(f"model '{model_id}': cannot fetch it from the Hugging Face Hub "
                         f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None
