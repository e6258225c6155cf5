-- macro: lc_exact_sum(x), lc_exact_sum_w(x, w) and lc_exact_mean_w(x, w) -- an exactly rounded sum (math.fsum
--        semantics), and the mean fsum / sum(w); lc_limbs_total(...) and lc_limbs_mean(..., w): the same
--        over columns of partial sums (lc_limb0_w(x, w) ..., below)
-- spec: S3.3 (evaluator means are fsum / n, bit for bit), S9.8 (order-independent sums)
-- engine: duckdb (HUGEINT sums; the final rounding is the lc_exact_total function that
--         laya_cases.query.sql registers on every connection). Portable SQL elsewhere calls these by name.
-- method: every finite x with |x| < 2^103 is split exactly into four 52-bit integer limbs at
--         scales 2^40, 2^-12, 2^-64 and 2^-116 (x*2^k and trunc are exact in binary64, and each
--         difference is a span of x's own mantissa bits, so it is exact too). Limbs sum exactly
--         as HUGEINT in any order and lc_exact_total rounds the rational total once. Bits below
--         2^-116 and |x| >= 2^103 are listed as (rest, w) pairs and added exactly there (the
--         list is empty for ordinary values); NaN and infinities are decided in SQL below.
--         lc_exact_mean_w divides the rounded sum by sum(w), as the reference's fsum / n; only
--         when that sum overflows binary64 (the reference crashes) is the exact rational divided
--         first, so two confidences of 1e308 average 1e308 (lc_exact_w: the shared body).
-- params: none
CREATE OR REPLACE MACRO lc_fits(x) AS isfinite(x) AND abs(x) < CAST('1.0141204801825835e+31' AS DOUBLE);
CREATE OR REPLACE MACRO lc_t0(x) AS trunc(x * CAST('9.094947017729282e-13' AS DOUBLE));
CREATE OR REPLACE MACRO lc_t1(x) AS trunc(x * CAST('4096.0' AS DOUBLE));
CREATE OR REPLACE MACRO lc_t2(x) AS trunc(x * CAST('1.8446744073709552e+19' AS DOUBLE));
CREATE OR REPLACE MACRO lc_t3(x) AS trunc(x * CAST('8.307674973655724e+34' AS DOUBLE));
CREATE OR REPLACE MACRO lc_shift52(t) AS t * CAST('4503599627370496.0' AS DOUBLE);
CREATE OR REPLACE MACRO lc_rest(x) AS CASE
    WHEN lc_fits(x) THEN x - lc_t3(x) * CAST('1.2037062152420224e-35' AS DOUBLE)
    WHEN isfinite(x) THEN x END;
-- the sum in parts: lc_limb0_w .. lc_limb3_w, lc_rest_w and the NaN/+inf/-inf weights of (x, w) rows are
-- ADDITIVE (HUGEINT sums, lists of exact (rest, w) pairs), so a sum may be taken in pieces (per slice set,
-- then per group) and the pieces added: lc_limbs_total / lc_limbs_mean add the columns of partial sums and
-- round once, with the value lc_exact_w gives over all the rows (the exact sum is a function of the
-- multiset alone). lc_limbs_round is the one decision both take.
-- one row's limbs (integers below 2^52, as doubles; null for an x that does not fit)
CREATE OR REPLACE MACRO lc_l0(x) AS CASE WHEN lc_fits(x) THEN lc_t0(x) END;
CREATE OR REPLACE MACRO lc_l1(x) AS CASE WHEN lc_fits(x) THEN lc_t1(x) - lc_shift52(lc_t0(x)) END;
CREATE OR REPLACE MACRO lc_l2(x) AS CASE WHEN lc_fits(x) THEN lc_t2(x) - lc_shift52(lc_t1(x)) END;
CREATE OR REPLACE MACRO lc_l3(x) AS CASE WHEN lc_fits(x) THEN lc_t3(x) - lc_shift52(lc_t2(x)) END;
CREATE OR REPLACE MACRO lc_limb0_w(x, w) AS sum(CAST(lc_l0(x) AS HUGEINT) * w);
CREATE OR REPLACE MACRO lc_limb1_w(x, w) AS sum(CAST(lc_l1(x) AS HUGEINT) * w);
CREATE OR REPLACE MACRO lc_limb2_w(x, w) AS sum(CAST(lc_l2(x) AS HUGEINT) * w);
CREATE OR REPLACE MACRO lc_limb3_w(x, w) AS sum(CAST(lc_l3(x) AS HUGEINT) * w);
CREATE OR REPLACE MACRO lc_rest_w(x, w) AS list([lc_rest(x), CAST(w AS DOUBLE)]) FILTER (WHERE lc_rest(x) <> 0);
CREATE OR REPLACE MACRO lc_nan_w(x, w) AS sum(CASE WHEN isnan(x) THEN w ELSE 0 END);
CREATE OR REPLACE MACRO lc_pinf_w(x, w) AS sum(CASE WHEN x = CAST('inf' AS DOUBLE) THEN w ELSE 0 END);
CREATE OR REPLACE MACRO lc_ninf_w(x, w) AS sum(CASE WHEN x = CAST('-inf' AS DOUBLE) THEN w ELSE 0 END);
-- a partial rest list with every weight multiplied by w (a partial sum of rows repeated w times)
CREATE OR REPLACE MACRO lc_rest_times(r, w) AS [[p[1], p[2] * CAST(w AS DOUBLE)] FOR p IN r];
-- the rest lists of several partial sums as one list (NULL when none has a rest)
CREATE OR REPLACE MACRO lc_rests(r) AS flatten(list(r) FILTER (WHERE r IS NOT NULL));
CREATE OR REPLACE MACRO lc_limbs_round(s0, s1, s2, s3, rest, nan, pinf, ninf, d) AS CASE
    -- NaN, or +inf with -inf, is NaN; a lone infinity wins (as fsum); handled here because a
    -- Python UDF cannot return NaN to DuckDB (it arrives as NULL)
    WHEN nan > 0 OR (pinf > 0 AND ninf > 0) THEN CAST('nan' AS DOUBLE)
    WHEN pinf > 0 THEN CAST('inf' AS DOUBLE)
    WHEN ninf > 0 THEN CAST('-inf' AS DOUBLE)
    ELSE lc_exact_total(s0, s1, s2, s3, rest, d)
    END;
CREATE OR REPLACE MACRO lc_exact_w(x, w, d) AS lc_limbs_round(lc_limb0_w(x, w), lc_limb1_w(x, w), lc_limb2_w(x, w),
    lc_limb3_w(x, w), lc_rest_w(x, w), lc_nan_w(x, w), lc_pinf_w(x, w), lc_ninf_w(x, w), d);
CREATE OR REPLACE MACRO lc_limbs_sum(s0, s1, s2, s3, rest, nan, pinf, ninf, d) AS lc_limbs_round(
    sum(s0), sum(s1), sum(s2), sum(s3), lc_rests(rest), sum(nan), sum(pinf), sum(ninf), d);
CREATE OR REPLACE MACRO lc_limbs_total(s0, s1, s2, s3, rest, nan, pinf, ninf) AS
    lc_limbs_sum(s0, s1, s2, s3, rest, nan, pinf, ninf, CAST(NULL AS HUGEINT));
CREATE OR REPLACE MACRO lc_limbs_mean(s0, s1, s2, s3, rest, nan, pinf, ninf, w) AS
    lc_limbs_sum(s0, s1, s2, s3, rest, nan, pinf, ninf, CAST(sum(w) AS HUGEINT));
CREATE OR REPLACE MACRO lc_exact_sum_w(x, w) AS lc_exact_w(x, w, CAST(NULL AS HUGEINT));
CREATE OR REPLACE MACRO lc_exact_mean_w(x, w) AS lc_exact_w(x, w, CAST(sum(w) AS HUGEINT));
-- unweighted, the limbs sum as BIGINT (each is below 2^52; DuckDB's sum of BIGINT is a HUGEINT, exact): the
-- same sums without a HUGEINT product per row (aurc's sum over every level: 5% of level_points at 3M levels)
CREATE OR REPLACE MACRO lc_exact_sum(x) AS lc_limbs_round(sum(CAST(lc_l0(x) AS BIGINT)), sum(CAST(lc_l1(x) AS BIGINT)),
    sum(CAST(lc_l2(x) AS BIGINT)), sum(CAST(lc_l3(x) AS BIGINT)),
    lc_rest_w(x, 1), lc_nan_w(x, 1), lc_pinf_w(x, 1), lc_ninf_w(x, 1), CAST(NULL AS HUGEINT));
