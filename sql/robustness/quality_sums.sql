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
    SELECT dim, key, correct, conf, n, lc_reliability_bin(conf) AS bin,
           CASE WHEN correct IS NOT NULL THEN (conf - CASE WHEN correct THEN 1.0 ELSE 0.0 END)
                                              * (conf - CASE WHEN correct THEN 1.0 ELSE 0.0 END) END AS sq
    FROM slice_cells
)
SELECT dim, key, CAST(NULL AS VARCHAR) AS answer_type, correct, bin, CAST(sum(n) AS BIGINT) AS n,
       CAST(sum(CASE WHEN conf IS NOT NULL THEN n ELSE 0 END) AS BIGINT) AS n_conf,
       CAST(sum(CASE WHEN isnan(conf) THEN n ELSE 0 END) AS BIGINT) AS n_nan,
       CAST(sum(CASE WHEN NOT isnan(conf) AND (conf < 0.0 OR conf > 1.0) THEN n ELSE 0 END) AS BIGINT) AS n_out,
       lc_limb0_w(conf, n) AS conf_0, lc_limb1_w(conf, n) AS conf_1, lc_limb2_w(conf, n) AS conf_2,
       lc_limb3_w(conf, n) AS conf_3, lc_rest_w(conf, n) AS conf_rest, lc_nan_w(conf, n) AS conf_nan,
       lc_pinf_w(conf, n) AS conf_pinf, lc_ninf_w(conf, n) AS conf_ninf,
       lc_limb0_w(sq, n) AS sq_0, lc_limb1_w(sq, n) AS sq_1, lc_limb2_w(sq, n) AS sq_2,
       lc_limb3_w(sq, n) AS sq_3, lc_rest_w(sq, n) AS sq_rest, lc_nan_w(sq, n) AS sq_nan,
       lc_pinf_w(sq, n) AS sq_pinf, lc_ninf_w(sq, n) AS sq_ninf
FROM x GROUP BY dim, key, correct, bin
