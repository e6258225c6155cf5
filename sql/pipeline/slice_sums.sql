-- table: slice_sums -- the cells' counts and partial exact sums once per (dim, key) group, per reliability bin
-- spec: S4.1, S4.2 (every slice aggregates the same way), S3.3 and S9.8 (exact sums: a function of the
--       multiset alone), S3.8 (confidence), S3.9 (paired: confidence and correctness present), S3.10 (bins)
-- grain: one row per (dim, key, answer_type, correct, bin); bin is lc_reliability_bin(conf), 0..14 for a
--        confidence in [0, 1], NULL for none, NaN or one outside [0, 1]
-- input: cells, slice_map
-- params: none
-- output: dim, key, answer_type, correct, bin, n, n_conf, n_nan, n_out, conf_0, conf_1, conf_2, conf_3,
--         conf_rest, conf_nan, conf_pinf, conf_ninf, sq_0, sq_1, sq_2, sq_3, sq_rest, sq_nan, sq_pinf, sq_ninf
-- why: the order-free metrics cost one pass over `cells` and tiny tables after it. The columns are the
--      partial sums of sql/macros/partial_sums.sql, which add up: they are taken per slice set (which fixes
--      answer_type and correct) and bin first, then added per group through slice_map, and a metric adds
--      them further and rounds once (lc_limbs_total/_mean), with the value the one-pass exact sum over
--      the group's cases has, bit for bit.
WITH sets AS (
    SELECT DISTINCT slice_set, correct FROM slice_map
), x AS (
    SELECT c.slice_set, c.conf, c.n, lc_reliability_bin(c.conf) AS bin, lc_sq_error(c.conf, s.correct) AS sq
    FROM cells c JOIN sets s USING (slice_set)
), per_set AS (
    SELECT slice_set, bin, lc_partial_sums(conf, sq, n) AS part FROM x GROUP BY slice_set, bin
), per_group AS (
    SELECT m.dim, m.key, m.answer_type, m.correct, p.bin, lc_partial_sums_add(p.part) AS part
    FROM per_set p JOIN slice_map m USING (slice_set)
    GROUP BY m.dim, m.key, m.answer_type, m.correct, p.bin
)
SELECT dim, key, answer_type, correct, bin, part.* FROM per_group
