"""Shortlist and tournament evaluation (spec S7.17-S7.20): narrow a large choice, then decide.

`retrieval` ranks labels by signed cosine and cuts tournament groups; `runner` wraps a decision
runner so every case stores the narrowed option set and its status; `harness` runs it through the
ordinary `run` path (so timing, errors and the commit are the same) and adds the config block.
The metrics are SQL (sql/shortlist/), added to a report only for runs of these two schemas.
"""
