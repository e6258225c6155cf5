"""laya-cases: an evaluation warehouse for typed-decision models.

Data flows dataset -> runner -> Arrow decision rows -> Parquet warehouse -> sql/ -> report/gate.
"""

__version__ = "0.1.0"


class UsageError(ValueError):
    """Bad input from the user (file, row, field, flag). The CLI prints it on one line, exit 2."""
