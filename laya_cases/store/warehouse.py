"""`Warehouse(root)`: the store at a root, the one way every wing opens one (as SQLMesh's engine adapters
come from one factory). A directory is a local warehouse of Parquet files (local.py); an s3://, s3a:// or
delta+file:// URL names Delta Lake tables (delta/warehouse.py, docs/scale.md "Object storage")."""
from __future__ import annotations

import functools
from pathlib import Path

from laya_cases.store.delta.url import is_url
from laya_cases.store.local import LocalWarehouse


class Warehouse(LocalWarehouse):
    def __new__(cls, root: Path | str = "warehouse"):
        if cls is Warehouse and is_url(str(root)):
            return super().__new__(_delta_warehouse())
        return super().__new__(cls)


@functools.lru_cache(maxsize=None)
def _delta_warehouse() -> type:
    """The Delta store as a Warehouse (isinstance holds for both kinds). Imported here, on the first URL:
    the Delta side loads pyarrow and deltalake, which no local reader (`runs`) should pay for."""
    from laya_cases.store.delta.warehouse import DeltaTables

    class DeltaWarehouse(DeltaTables, Warehouse):
        __doc__ = DeltaTables.__doc__

    return DeltaWarehouse
