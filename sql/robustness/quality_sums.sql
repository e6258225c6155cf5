-- table: slice_sums -- a robustness run's quality cells as the partial sums metrics/reliability.sql reads
-- spec: S7.16 (quality per kind: 15-bin ECE over the labelled cases), S3.10, S9.8
-- grain: one row per (dim = variant kind, key, correct, bin), shaped like pipeline/slice_sums (answer_type NULL)
-- input: slice_cells (robustness/quality_cells.sql)
-- params: none
-- output: dim, key, answer_type, correct, bin, n, n_conf, n_nan, n_out, conf_0, conf_1, conf_2, conf_3,
--         conf_rest, conf_nan, conf_pinf, conf_ninf, sq_0, sq_1, sq_2, sq_3, sq_rest, sq_nan, sq_pinf, sq_ninf
-- why: the quality ECE is the report's reliability.sql and ece.sql, not a second definition; the cells
--      are few (one per labelled confidence), so the partial sums are taken per group directly.
WITH x AS (
    SELECT dim, key, correct, conf, n, lc_reliability_bin(conf) AS bin, lc_sq_error(conf, correct) AS sq
    FROM slice_cells
), per_group AS (
    SELECT dim, key, correct, bin, lc_partial_sums(conf, sq, n) AS part FROM x GROUP BY dim, key, correct, bin
)
SELECT dim, key, CAST(NULL AS VARCHAR) AS answer_type, correct, bin, part.* FROM per_group
