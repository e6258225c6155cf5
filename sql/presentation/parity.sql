-- query: presentation_parity -- the harness path (softmax of the stored logits) against the runner's own probabilities
-- spec: S7.12 (exit 2 when they differ by more than 1e-3; a NaN difference counts), S7.4 (p =
--       softmax(z / max(0.001, T)) with max-subtraction), S2.6
-- grain: one row for the run
-- input: cases
-- params: run_id
-- output: n_decisions, n_unchecked, max_abs_diff, n_nan
-- why: a decision whose logits, temperature or probabilities are missing, or whose logits and
--      probabilities differ in length, cannot be checked and is counted in n_unchecked. max over a NaN
--      is NaN in DuckDB, so one NaN difference makes max_abs_diff NaN.
WITH c AS (
    SELECT logits, probabilities, greatest(0.001, temperature) AS t
    FROM cases
    WHERE run_id = $run_id AND split_part(qid, '/', 1) IN ('score_slot0_identical', 'score_first_slot_permuted')
), ok AS (
    SELECT * FROM c
    WHERE logits IS NOT NULL AND probabilities IS NOT NULL AND t IS NOT NULL AND len(logits) = len(probabilities)
      AND list_count(logits) = len(logits) AND list_count(probabilities) = len(probabilities)
), e AS (
    SELECT probabilities AS p,
           list_transform(logits, lambda z: exp(z / t - list_max(list_transform(logits, lambda y: y / t)))) AS e
    FROM ok
), diffs AS (
    SELECT list_transform(generate_series(1, len(e)), lambda i: abs(e[i] / list_sum(e) - p[i])) AS d FROM e
)
SELECT (SELECT count(*) FROM c) AS n_decisions,
       (SELECT count(*) FROM c) - (SELECT count(*) FROM ok) AS n_unchecked,
       (SELECT max(list_max(d)) FROM diffs) AS max_abs_diff,
       (SELECT count(*) FROM diffs WHERE list_bool_or(list_transform(d, lambda x: isnan(x)))) AS n_nan
