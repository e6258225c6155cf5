-- table: slice_sums -- the cells' counts and partial exact sums once per (dim, key) group, per reliability bin
-- spec: S4.1, S4.2 (every slice aggregates the same way), S3.3 and S9.8 (exact sums: a function of the
--       multiset alone), S3.8 (confidence), S3.9 (paired: confidence and correctness present), S3.10 (bins)
-- grain: one row per (dim, key, answer_type, correct, bin); bin is lc_reliability_bin(conf), 0..14 for a
--        confidence in [0, 1], NULL for none, NaN or one outside [0, 1]
-- input: cells, slice_map
-- params: none
-- output: dim, key, answer_type, correct, bin, n, n_conf, n_nan, n_out, conf_0, conf_1, conf_2, conf_3,
--         conf_rest, conf_nan, conf_pinf, conf_ninf, sq_0, sq_1, sq_2, sq_3, sq_rest, sq_nan, sq_pinf, sq_ninf
-- why: the order-free metrics cost one pass over `cells` and tiny tables after it. n counts every case,
--      n_conf those with a confidence, n_nan and n_out those with a NaN or an out-of-[0, 1] one; conf_* is
--      the exact sum of the confidences and sq_* that of (confidence - correct)^2 (paired cases only) as
--      partial sums (sql/macros/exact_sum.sql: limbs, rest pairs, NaN/+inf/-inf weights), which add up:
--      they are taken per slice set (which fixes answer_type and correct) and bin first, then added per
--      group through slice_map, and a metric adds them further and rounds once (lc_limbs_total/_mean),
--      with the value the one-pass exact sum over the group's cases has, bit for bit.
WITH sets AS (
    SELECT DISTINCT slice_set, correct FROM slice_map
), x AS (
    SELECT c.slice_set, c.conf, c.n, lc_reliability_bin(c.conf) AS bin,
           CASE WHEN s.correct IS NOT NULL THEN (c.conf - CASE WHEN s.correct THEN 1.0 ELSE 0.0 END)
                                                * (c.conf - CASE WHEN s.correct THEN 1.0 ELSE 0.0 END) END AS sq
    FROM cells c JOIN sets s USING (slice_set)
), per_set AS (
    SELECT slice_set, bin, CAST(sum(n) AS BIGINT) AS n,
           CAST(sum(CASE WHEN conf IS NOT NULL THEN n ELSE 0 END) AS BIGINT) AS n_conf,
           CAST(sum(CASE WHEN isnan(conf) THEN n ELSE 0 END) AS BIGINT) AS n_nan,
           CAST(sum(CASE WHEN NOT isnan(conf) AND (conf < 0.0 OR conf > 1.0) THEN n ELSE 0 END) AS BIGINT) AS n_out,
           lc_limb0_w(conf, n) AS conf_0, lc_limb1_w(conf, n) AS conf_1, lc_limb2_w(conf, n) AS conf_2,
           lc_limb3_w(conf, n) AS conf_3, lc_rest_w(conf, n) AS conf_rest, lc_nan_w(conf, n) AS conf_nan,
           lc_pinf_w(conf, n) AS conf_pinf, lc_ninf_w(conf, n) AS conf_ninf,
           lc_limb0_w(sq, n) AS sq_0, lc_limb1_w(sq, n) AS sq_1, lc_limb2_w(sq, n) AS sq_2,
           lc_limb3_w(sq, n) AS sq_3, lc_rest_w(sq, n) AS sq_rest, lc_nan_w(sq, n) AS sq_nan,
           lc_pinf_w(sq, n) AS sq_pinf, lc_ninf_w(sq, n) AS sq_ninf
    FROM x GROUP BY slice_set, bin
)
SELECT m.dim, m.key, m.answer_type, m.correct, p.bin,
       CAST(sum(p.n) AS BIGINT) AS n, CAST(sum(p.n_conf) AS BIGINT) AS n_conf,
       CAST(sum(p.n_nan) AS BIGINT) AS n_nan, CAST(sum(p.n_out) AS BIGINT) AS n_out,
       sum(p.conf_0) AS conf_0, sum(p.conf_1) AS conf_1, sum(p.conf_2) AS conf_2, sum(p.conf_3) AS conf_3,
       lc_rests(p.conf_rest) AS conf_rest, sum(p.conf_nan) AS conf_nan, sum(p.conf_pinf) AS conf_pinf,
       sum(p.conf_ninf) AS conf_ninf,
       sum(p.sq_0) AS sq_0, sum(p.sq_1) AS sq_1, sum(p.sq_2) AS sq_2, sum(p.sq_3) AS sq_3,
       lc_rests(p.sq_rest) AS sq_rest, sum(p.sq_nan) AS sq_nan, sum(p.sq_pinf) AS sq_pinf, sum(p.sq_ninf) AS sq_ninf
FROM per_set p JOIN slice_map m USING (slice_set)
GROUP BY m.dim, m.key, m.answer_type, m.correct, p.bin
