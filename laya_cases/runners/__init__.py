"""Model runners: one module each behind the small protocol in base.py, found through a registry.

Built-in runners register through the same entry-point group a third-party package would use
(`laya_cases.runners` in pyproject.toml), so our own runners use the seam an outsider uses.
"""
