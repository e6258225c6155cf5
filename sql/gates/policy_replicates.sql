-- table: boot_values -- each bootstrap replicate's delta (candidate - baseline) per on_insufficient rule, for bootstrap/intervals.sql
-- spec: S6.5 (`on_insufficient`, a laya-cases extension), S9.5 (percentile bootstrap; a replicate
--       where the rule has no paired case is skipped)
-- grain: one row per (rule, replicate) with at least one of the rule's paired cases drawn
-- input: policy_class_pairs, boot_class_counts (replicate, class, m): candidate case positions of that
--        class (policy_case_classes) were drawn m > 0 times in all in that replicate; one batch of
--        replicates at a time (laya_cases/query/paired_bootstrap.py)
-- params: none
-- output: dim ('rule@<replicate>'), key (the rule's position as text), metric ('delta'), value
-- why: a gate reads report documents, which list cases, not dataset rows, so the resampling unit
--      is the case position (diff resamples rows); the draws are shared by every rule, as a report's
--      slices share theirs. The delta is (hits - base_hits) / n over the drawn pairs, one rounding.
WITH replicates AS (
    SELECT p.pos, d.replicate, sum(d.m) AS n, sum(d.m * p.score) AS hits, sum(d.m * p.base_score) AS base_hits
    FROM boot_class_counts d
    JOIN policy_class_pairs p ON p.class = d.class
    GROUP BY p.pos, d.replicate
)
SELECT 'rule@' || CAST(replicate AS VARCHAR) AS dim, CAST(pos AS VARCHAR) AS key, 'delta' AS metric,
       CAST(hits - base_hits AS DOUBLE) / n AS value
FROM replicates
WHERE n > 0
