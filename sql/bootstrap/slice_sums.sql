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
    SELECT w.replicate, r.slice_set, r.bin, lc_partial_sums_times(r.part, w.w) AS part
    FROM row_sums r JOIN boot_weights w USING (row_index)
    GROUP BY w.replicate, r.slice_set, r.bin
), per_group AS (
    SELECT m.dim || '@' || CAST(p.replicate AS VARCHAR) AS dim, m.key, m.answer_type, m.correct, p.bin,
           lc_partial_sums_add(p.part) AS part
    FROM per_set p JOIN slice_map m USING (slice_set)
    GROUP BY ALL
)
SELECT dim, key, answer_type, correct, bin, part.* FROM per_group
