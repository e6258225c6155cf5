"""Benchmarks built on run/, record/, query/ and gates/: MASSIVE, relevance, robustness, shortlist,
presentation, cross-lingual consistency. No harness imports another.
"""
