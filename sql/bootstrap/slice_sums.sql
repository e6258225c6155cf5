-- table: slice_sums (bootstrap) -- every replicate's resampled partial sums, shaped like pipeline/slice_sums
-- spec: S9.5 (replicate b takes row r with the multiplicity the index stream gave it), S9.8
-- grain: one row per (replicate, dim, key, answer_type, correct, bin); the replicate rides in `dim` as
--        '<dim>@<replicate>' so every metric file runs unchanged on replicates
-- input: row_sums, boot_weights (replicate, row_index, w), slice_map
-- params: none
-- output: dim, key, answer_type, correct, bin, n, n_conf, n_nan, n_out, conf_0, conf_1, conf_2, conf_3,
--         conf_rest, conf_nan, conf_pinf, conf_ninf, sq_0, sq_1, sq_2, sq_3, sq_rest, sq_nan, sq_pinf, sq_ninf
-- why: a row drawn w times adds w times its partial sums (limbs, counts and rest weights scale by w), so
--      each replicate's sums per slice set are one weighted aggregation, then mapped to groups.
WITH per_set AS (
    SELECT w.replicate, r.slice_set, r.bin, sum(r.n * w.w) AS n, sum(r.n_conf * w.w) AS n_conf,
           sum(r.n_nan * w.w) AS n_nan, sum(r.n_out * w.w) AS n_out,
           sum(r.conf_0 * w.w) AS conf_0, sum(r.conf_1 * w.w) AS conf_1, sum(r.conf_2 * w.w) AS conf_2,
           sum(r.conf_3 * w.w) AS conf_3, lc_rests(lc_rest_times(r.conf_rest, w.w)) AS conf_rest,
           sum(r.conf_nan * w.w) AS conf_nan, sum(r.conf_pinf * w.w) AS conf_pinf, sum(r.conf_ninf * w.w) AS conf_ninf,
           sum(r.sq_0 * w.w) AS sq_0, sum(r.sq_1 * w.w) AS sq_1, sum(r.sq_2 * w.w) AS sq_2,
           sum(r.sq_3 * w.w) AS sq_3, lc_rests(lc_rest_times(r.sq_rest, w.w)) AS sq_rest,
           sum(r.sq_nan * w.w) AS sq_nan, sum(r.sq_pinf * w.w) AS sq_pinf, sum(r.sq_ninf * w.w) AS sq_ninf
    FROM row_sums r JOIN boot_weights w USING (row_index)
    GROUP BY w.replicate, r.slice_set, r.bin
)
SELECT m.dim || '@' || CAST(p.replicate AS VARCHAR) AS dim, m.key, m.answer_type, m.correct, p.bin,
       sum(p.n) AS n, sum(p.n_conf) AS n_conf, sum(p.n_nan) AS n_nan, sum(p.n_out) AS n_out,
       sum(p.conf_0) AS conf_0, sum(p.conf_1) AS conf_1, sum(p.conf_2) AS conf_2, sum(p.conf_3) AS conf_3,
       lc_rests(p.conf_rest) AS conf_rest, sum(p.conf_nan) AS conf_nan, sum(p.conf_pinf) AS conf_pinf,
       sum(p.conf_ninf) AS conf_ninf,
       sum(p.sq_0) AS sq_0, sum(p.sq_1) AS sq_1, sum(p.sq_2) AS sq_2, sum(p.sq_3) AS sq_3,
       lc_rests(p.sq_rest) AS sq_rest, sum(p.sq_nan) AS sq_nan, sum(p.sq_pinf) AS sq_pinf, sum(p.sq_ninf) AS sq_ninf
FROM per_set p JOIN slice_map m USING (slice_set)
GROUP BY ALL
