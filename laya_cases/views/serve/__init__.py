"""`laya-cases serve`: a local, read-only web app over a warehouse (issue 13, docs/html.md).

Server-rendered HTML (laya_cases/views/html/markup.py), Starlette for routing, uvicorn to listen; both are
the optional extra `laya-cases[serve]` and are imported only here, only when the app is made, so
`import laya_cases` and every other command never load them. Every value of a URL is checked
(params.py) and bound as a query parameter of a fixed SQL file (sql/serve/); the app has GET routes
only, opens the store's Parquet files read-only through DuckDB views and serves no file.
"""
from __future__ import annotations

from pathlib import Path

from laya_cases.core.errors import UsageError
from laya_cases.interop.extras import install_hint
from laya_cases.store.warehouse import Warehouse


def require() -> None:
    """UsageError naming the install command unless the serve extra is importable."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise UsageError("laya-cases serve needs Starlette and uvicorn: %s" % install_hint("serve")) from None


def create_app(root):
    """The Starlette app over the warehouse at `root` (a Warehouse or a path)."""
    require()
    from laya_cases.views.serve.app import build          # Starlette, loaded here only

    return build(root if isinstance(root, Warehouse) else Warehouse(Path(root)))


def serve(root, host: str = "127.0.0.1", port: int = 8765) -> None:
    """Listen on host:port until interrupted."""
    app = create_app(root)
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="warning", server_header=False, date_header=False)
