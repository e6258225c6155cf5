"""Install hints for the optional extras (serve, spark, objstore), true to where laya-cases came from.

laya-cases is installed from a clone (it is not on the package index), so `pip install 'laya-cases[x]'`
cannot work; the hint names the clone pip installed from (PEP 610's direct_url.json), else `.`.
"""
from __future__ import annotations

import json
from importlib import metadata
from urllib.parse import unquote, urlparse


def _source() -> str:
    """The clone's directory when pip recorded one, else `.` (a command run from the clone)."""
    for dist in metadata.distributions(name="laya-cases"):    # a clone's own egg-info records no URL
        try:
            url = urlparse(json.loads(dist.read_text("direct_url.json") or "{}").get("url", ""))
        except (ValueError, AttributeError):
            continue
        if url.scheme == "file" and url.path:
            return unquote(url.path)
    return "."


def install_hint(extra: str) -> str:
    """e.g. "pip install -e '/home/me/laya-cases[serve]' (or: bash scripts/setup.sh dev, which has every extra)"."""
    return "pip install -e '%s[%s]' (or: bash scripts/setup.sh dev, which has every extra)" % (_source(), extra)
