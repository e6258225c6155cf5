"""The version of laya-cases, recorded in every run (extensions.laya_cases_version) and printed by --version."""

__version__ = "0.1.0"
