"""Which warehouses live in a table format (docs/scale.md "Object storage"), and how to reach them.

    s3://bucket/prefix        Delta Lake tables on S3 or an S3-compatible server (MinIO, moto, R2, ...)
    s3a://bucket/prefix       the same (Spark's spelling)
    delta+file:///abs/path    Delta Lake tables on the local file system (delta+file:rel/path: relative)

Anything else is a local warehouse directory (warehouse.py). The CLI's option parser hands the URL over
as a `pathlib.Path`, which folds `//` into `/` ("s3:/bucket/prefix"): `parse` undoes that, so both
spellings name the same warehouse. Connection settings come from the usual environment variables only
(never from the URL, never written anywhere): AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
AWS_SESSION_TOKEN, AWS_REGION (or AWS_DEFAULT_REGION), AWS_ALLOW_HTTP. S3 commits are atomic across
hosts through S3's conditional put (If-None-Match), deltalake's default since 1.0: no lock service.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Dict, Optional

from laya_cases.core.errors import UsageError

_URL = re.compile(r"^(s3a?|delta\+file):(.*)$", re.IGNORECASE)
#: the environment variables handed to deltalake as storage options, when set
ENV_OPTIONS = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
               "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ALLOW_HTTP", "AWS_S3_ALLOW_UNSAFE_RENAME")
TABLES = ("cases", "slice_sets", "runs")


#: a scheme a user may mean as a URL; a local directory's name never starts like this
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://|^(s3a?|delta\+[a-z0-9]+|file|https?|gs|gcs|az|abfss?|hdfs|ftp):",
                     re.IGNORECASE)
_SYSTEM = ("/dev", "/proc", "/sys")


def check_warehouse(text: str) -> None:
    """UsageError (one line) unless `text` is a local directory path or a warehouse URL laya-cases
    supports, in its supported form: s3://bucket/prefix or delta+file:///path, no query or fragment."""
    scheme = _SCHEME.match(text)
    if scheme is None:
        return
    name = (scheme.group(1) or scheme.group(2)).lower()
    if name == "file":
        raise UsageError("warehouse %r: a local warehouse is a plain path (e.g. %s); a Delta one is "
                         "delta+file:///path" % (text, text.split(":", 1)[1].lstrip("/") and "/" + text.split(":", 1)[1].lstrip("/")))
    if name == "delta+s3":
        raise UsageError("warehouse %r: S3 warehouses are Delta tables already: use s3://%s" % (text, text.split("://", 1)[-1]))
    if name not in ("s3", "s3a", "delta+file"):
        raise UsageError("warehouse %r: unsupported URL scheme %r (a directory, s3://bucket/prefix or "
                         "delta+file:///path)" % (text, name))
    if "?" in text or "#" in text:
        raise UsageError("warehouse %r: a warehouse URL has no query string or fragment" % text)
    location = parse(text)
    if location.scheme == "s3" and "/" not in location.base[len("s3://"):]:
        raise UsageError("warehouse %r names a bucket but no prefix: use s3://bucket/prefix" % text)
    if location.scheme == "file":
        local = location.base[len("file://"):]
        if any(local == top or local.startswith(top + "/") for top in _SYSTEM):
            raise UsageError("warehouse %r is under %s, not a place for a warehouse" % (text, local.split("/")[1] and "/" + local.split("/")[1]))
        if os.path.exists(local) and not os.path.isdir(local):
            raise UsageError("warehouse %r is a file, not a directory" % text)


def warehouse_problem(text: str) -> Optional[str]:
    """check_warehouse's message for `text`, or None when it names a warehouse."""
    try:
        check_warehouse(text)
    except UsageError as exc:
        return str(exc)
    return None


def is_url(text: object) -> bool:
    """Whether a --warehouse value names a table-format warehouse rather than a directory."""
    return isinstance(text, str) and bool(_URL.match(text))


@dataclass(frozen=True)
class Location:
    """A table-format warehouse: `base` (the URL shown to users and readers) and where each table is."""

    base: str
    scheme: str                 # "s3" or "file"

    @property
    def name(self) -> str:
        """The URL as laya-cases shows it (delta+file:///... for a local path, not the tables' file://)."""
        return "delta+" + self.base if self.scheme == "file" else self.base

    def table(self, name: str) -> str:
        return "%s/%s" % (self.base.rstrip("/"), name)

    def storage_options(self) -> Dict[str, str]:
        return storage_options() if self.scheme == "s3" else {}


def parse(text: str) -> Location:
    """The Location a --warehouse URL names; UsageError (one line) for one without a bucket or path."""
    match = _URL.match(text)
    if not match:
        raise UsageError("not a warehouse URL: %r (s3://bucket/prefix or delta+file:///path)" % text)
    scheme, rest = match.group(1).lower(), match.group(2)
    if scheme in ("s3", "s3a"):
        path = rest.lstrip("/").rstrip("/")
        if not path or path.startswith("."):
            raise UsageError("warehouse URL %r names no bucket: use s3://bucket/prefix" % text)
        return Location("s3://" + path, "s3")
    if not rest.strip("/"):
        raise UsageError("warehouse URL %r names no directory: use delta+file:///path" % text)
    local = "/" + rest.lstrip("/") if rest.startswith("/") else os.path.abspath(rest)
    return Location("file://" + os.path.normpath(local), "file")


def storage_options(env: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """deltalake's storage options from the environment. An http:// endpoint (a local MinIO or moto)
    needs AWS_ALLOW_HTTP=true, which is implied by naming such an endpoint."""
    env = os.environ if env is None else env
    found = {k: env[k] for k in ENV_OPTIONS if env.get(k)}
    endpoint = found.get("AWS_ENDPOINT_URL")
    if endpoint is not None:
        from urllib.parse import urlsplit

        parts = urlsplit(endpoint)
        if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
            raise UsageError("AWS_ENDPOINT_URL %r is not an http(s) URL with a host (e.g. http://127.0.0.1:9000)"
                             % endpoint)
    if "AWS_REGION" not in found and "AWS_DEFAULT_REGION" in found:
        found["AWS_REGION"] = found["AWS_DEFAULT_REGION"]
    found.pop("AWS_DEFAULT_REGION", None)
    if found.get("AWS_ENDPOINT_URL", "").lower().startswith("http://"):
        found.setdefault("AWS_ALLOW_HTTP", "true")
    return found
