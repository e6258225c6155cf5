"""Reports and diffs of committed runs, computed by query/ from the store alone (no model).
"""
