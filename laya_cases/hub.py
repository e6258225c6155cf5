"""Whether the Hugging Face Hub can be reached, asked before `datasets.load_dataset(<hub id>)`: without a
network that call retries for tens of seconds; this answers at once. Offline mode (HF_HUB_OFFLINE /
HF_DATASETS_OFFLINE set) counts as reachable, since a cached copy may load."""
from __future__ import annotations

import os
import socket

_OFFLINE = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")


def reachable(host: str = "huggingface.co") -> bool:
    if any(os.environ.get(v, "").strip().lower() in ("1", "true", "yes", "on") for v in _OFFLINE):
        return True
    try:
        socket.getaddrinfo(host, 443)
        return True
    except OSError:
        return False
