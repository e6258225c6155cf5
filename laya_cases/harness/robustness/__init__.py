"""Metamorphic robustness as stored variants (spec S7.13-S7.16).

Each case is asked three ways -- baseline, option_order (seeded shuffle) and label_rename (`A`, `B`,
... or `key_i`) -- and every answer is a decision row of one run, in canonical option order, linked
to its baseline case by `parent_case_id`. Every robustness number is SQL over those rows
(sql/robustness/): pair metrics, group summaries, quality per kind, per language.

    variants.py   the S7.13 orders and labels, the S7.14 canonicalisation
    execute.py    the three passes over a runner, committed as one run (kind `robustness`)
    summary.py    the S7.16 document from the store alone
    compare.py    per-kind agreement and drift of two robustness runs (`laya-cases diff`)
    gate.py       policy rules on the robustness numbers
"""
