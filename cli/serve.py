"""`laya-cases serve`: the local read-only web app over the warehouse (laya_cases/serve, docs/html.md)."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from laya_cases.core.errors import UsageError
from laya_cases_cli import console
from laya_cases_cli.app import app, warehouse_of
from laya_cases_cli.options import WAREHOUSE


@app.command()
def serve(
    warehouse: Optional[Path] = WAREHOUSE,
    port: int = typer.Option(8765, "--port", metavar="P", help="TCP port to listen on."),
    host: str = typer.Option("127.0.0.1", "--host", metavar="ADDR", help="Address to bind; the default is this "
                             "machine only (another address exposes the warehouse to the network)."),
) -> None:
    """Browse the warehouse in a web browser (read-only).

    Needs laya-cases[serve]. Pages: the runs; a run's report with its charts and
    sortable slice tables; its cases, filtered, searched (?q=) and sorted; one case with
    its input; the same case side by side in several runs; 2 to 10 runs compared, with
    a grid of the cases where they differ. Every table page is also CSV or JSON
    (?format=csv|json). Nothing is ever written (docs/html.md). Stop with Ctrl-C.

    \b
    Examples:
      laya-cases serve -w warehouse --port 8765
      open http://127.0.0.1:8765/compare?runs=base,int8,use
      curl 'http://127.0.0.1:8765/run/base/cases?outcome=incorrect&sort=confidence&format=csv'
    """
    from laya_cases.views.serve import require, serve as run_server

    if not host.strip():               # an unset $HOST must not mean every interface
        raise UsageError("--host is empty: give an address (127.0.0.1, the default, is this machine only)")
    if not 0 < port < 65536:
        raise UsageError("--port must be in 1..65535, got %d" % port)
    require()                      # the extra, before anything is announced
    wh = warehouse_of(warehouse)
    if not wh.root.is_dir():
        raise UsageError("warehouse %s is not a directory" % wh.root)
    console.note("serving %s on http://%s:%d/ (read-only; Ctrl-C stops)" % (wh.root, host, port))
    run_server(wh, host, port)
