"""`laya-cases ingest`: an answers file -> a committed run, row by row (answers.py) or column-wise (bulk.py).
"""
