"""The per-language MASSIVE harness (spec S7.1-S7.8): data, one run over every language, SQL metrics,
the harness JSON document (export and import). docs/massive.md is the user guide."""
