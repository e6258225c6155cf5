"""laya-cases: an evaluation warehouse for typed-decision models.

Data flows dataset -> runner -> Arrow decision rows -> Parquet warehouse -> sql/ -> report/gate.
"""

__version__ = "0.1.0"


class UsageError(ValueError):
    """Bad input from the user (file, row, field, flag). The CLI prints it on one line, exit 2."""


def shorten(text: str, limit: int = 80) -> str:
    """User input echoed in a message (a run id, a label, a path): at most about `limit` characters,
    the cut said, so one huge value cannot bury the line it is quoted in."""
    if len(text) <= limit:
        return text
    return "%s... (%d characters)" % (text[:max(limit - 20, 10)], len(text))
