"""The error every wing raises for bad user input, and how user input is echoed in its one line."""


class UsageError(ValueError):
    """Bad input from the user (file, row, field, flag). The CLI prints it on one line, exit 2."""


def shorten(text: str, limit: int = 80) -> str:
    """User input echoed in a message (a run id, a label, a path): at most about `limit` characters,
    the cut said, so one huge value cannot bury the line it is quoted in."""
    if len(text) <= limit:
        return text
    return "%s... (%d characters)" % (text[:max(limit - 20, 10)], len(text))


def shorten_path(text: str, limit: int = 200) -> str:
    """A file's path in a message: whole up to `limit` characters (a temporary directory's path is often
    over 80), else its end, which names the file."""
    if len(text) <= limit:
        return text
    return "...%s (%d characters)" % (text[-(limit - 25):], len(text))
