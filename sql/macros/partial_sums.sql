-- macro: lc_sq_error(conf, correct), lc_partial_sums(conf, sq, n), lc_partial_sums_add(p) and
--        lc_partial_sums_times(p, w) -- the counts and partial exact sums every order-free metric reads
-- spec: S3.3 and S9.8 (exact sums: a function of the multiset alone), S3.8 (confidence), S3.9 (paired:
--       confidence and correctness present), S3.10 (reliability bins)
-- engine: any (a STRUCT; a file selects `part.*` to get the columns n, n_conf, n_nan, n_out, conf_0,
--         conf_1, conf_2, conf_3, conf_rest, conf_nan, conf_pinf, conf_ninf, sq_0 .. sq_ninf)
-- why: the report (pipeline/slice_sums.sql), the bootstrap (bootstrap/row_sums.sql, slice_sums.sql)
--      and the robustness quality cells (robustness/quality_sums.sql) take the same partial sums of
--      different cells; the list of them is written once, here. n counts every case, n_conf those with
--      a confidence, n_nan and n_out those with a NaN or an out-of-[0, 1] one; conf_* is the exact sum
--      of the confidences and sq_* that of lc_sq_error (paired cases only), as the partial sums of
--      sql/macros/exact_sum.sql, which add up: _add sums partial sums (rows of one group), _times
--      sums them each multiplied by a weight (a resampled row counted w times). A field is read with
--      struct_extract(p, 'f'), not p.f: Spark has no macros, and their expansion (engines/translate.py)
--      substitutes a parameter only where it stands alone.
-- params: none
CREATE OR REPLACE MACRO lc_sq_error(conf, correct) AS CASE WHEN correct IS NOT NULL THEN
    (conf - CASE WHEN correct THEN 1.0 ELSE 0.0 END) * (conf - CASE WHEN correct THEN 1.0 ELSE 0.0 END) END;
CREATE OR REPLACE MACRO lc_partial_sums(conf, sq, n) AS {
    'n': CAST(sum(n) AS BIGINT),
    'n_conf': CAST(sum(CASE WHEN conf IS NOT NULL THEN n ELSE 0 END) AS BIGINT),
    'n_nan': CAST(sum(CASE WHEN isnan(conf) THEN n ELSE 0 END) AS BIGINT),
    'n_out': CAST(sum(CASE WHEN NOT isnan(conf) AND (conf < 0.0 OR conf > 1.0) THEN n ELSE 0 END) AS BIGINT),
    'conf_0': lc_limb0_w(conf, n), 'conf_1': lc_limb1_w(conf, n), 'conf_2': lc_limb2_w(conf, n),
    'conf_3': lc_limb3_w(conf, n), 'conf_rest': lc_rest_w(conf, n), 'conf_nan': lc_nan_w(conf, n),
    'conf_pinf': lc_pinf_w(conf, n), 'conf_ninf': lc_ninf_w(conf, n),
    'sq_0': lc_limb0_w(sq, n), 'sq_1': lc_limb1_w(sq, n), 'sq_2': lc_limb2_w(sq, n),
    'sq_3': lc_limb3_w(sq, n), 'sq_rest': lc_rest_w(sq, n), 'sq_nan': lc_nan_w(sq, n),
    'sq_pinf': lc_pinf_w(sq, n), 'sq_ninf': lc_ninf_w(sq, n)};
CREATE OR REPLACE MACRO lc_partial_sums_times(p, w) AS {
    'n': CAST(sum(struct_extract(p, 'n') * w) AS BIGINT),
    'n_conf': CAST(sum(struct_extract(p, 'n_conf') * w) AS BIGINT),
    'n_nan': CAST(sum(struct_extract(p, 'n_nan') * w) AS BIGINT),
    'n_out': CAST(sum(struct_extract(p, 'n_out') * w) AS BIGINT),
    'conf_0': sum(struct_extract(p, 'conf_0') * w), 'conf_1': sum(struct_extract(p, 'conf_1') * w),
    'conf_2': sum(struct_extract(p, 'conf_2') * w), 'conf_3': sum(struct_extract(p, 'conf_3') * w),
    'conf_rest': lc_rests(lc_rest_times(struct_extract(p, 'conf_rest'), w)),
    'conf_nan': sum(struct_extract(p, 'conf_nan') * w), 'conf_pinf': sum(struct_extract(p, 'conf_pinf') * w),
    'conf_ninf': sum(struct_extract(p, 'conf_ninf') * w),
    'sq_0': sum(struct_extract(p, 'sq_0') * w), 'sq_1': sum(struct_extract(p, 'sq_1') * w),
    'sq_2': sum(struct_extract(p, 'sq_2') * w), 'sq_3': sum(struct_extract(p, 'sq_3') * w),
    'sq_rest': lc_rests(lc_rest_times(struct_extract(p, 'sq_rest'), w)),
    'sq_nan': sum(struct_extract(p, 'sq_nan') * w), 'sq_pinf': sum(struct_extract(p, 'sq_pinf') * w),
    'sq_ninf': sum(struct_extract(p, 'sq_ninf') * w)};
CREATE OR REPLACE MACRO lc_partial_sums_add(p) AS lc_partial_sums_times(p, 1);
