"""Whether the Hugging Face Hub can be reached, asked before `datasets.load_dataset(<hub id>)`: without a
network that call retries for tens of seconds; this answers at once. Offline mode (HF_HUB_OFFLINE /
HF_DATASETS_OFFLINE set) counts as reachable, since a cached copy may load, but only where `datasets`
applies it: it reads the variables once, when imported, so a variable set later in the process (the model
runners set HF_HUB_OFFLINE) leaves its calls going to the network, and those would retry for ~20 s."""
from __future__ import annotations

import os
import socket
import sys

_OFFLINE = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


def offline_mode() -> bool:
    """The environment asks for offline mode and `datasets` (if already imported) read it so."""
    if not any(os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on") for v in _OFFLINE):
        return False
    config = sys.modules.get("datasets.config")
    return config is None or bool(getattr(config, "HF_HUB_OFFLINE", True))


def reachable(host: str = "huggingface.co") -> bool:
    if offline_mode():
        return True
    try:
        socket.getaddrinfo(host, 443)
        return True
    except OSError:
        return False
