"""The warehouse: the only wing that opens files under a warehouse root, for reading or writing.

Local Parquet (warehouse.py) or Delta tables (delta/); layout, staging, commit, progress, shards, checks.
"""
