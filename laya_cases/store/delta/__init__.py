"""Table-format warehouses: Delta Lake tables on S3-compatible storage or a local path (docs/scale.md
"Object storage"). url.py: which --warehouse values name one; tables.py: the tables and their commits;
warehouse.py: the Warehouse that reads and writes them. Needs the `objstore` extra (deltalake)."""
from laya_cases.store.delta.url import is_url, parse

__all__ = ["is_url", "parse"]
