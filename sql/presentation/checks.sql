-- query: presentation_checks -- S7.10 slot-0 margin and S7.11 first-slot rate from the stored raw logits
-- spec: S7.10 (z0 - mean(z) per decision; mean over a state's 6 configurations; mean over states),
--       S7.11 (share of a state's 6 permutations whose first maximum is slot 0; over all 60
--       decisions), S7.12 (per-state values, leave-one-out range of (sum - x_i) / (n - 1))
-- grain: one row per check that has decisions in the run
-- input: cases (a presentation run: qids `<check>/<configuration>`, one dataset row per state)
-- params: run_id
-- output: check_name, metric, n_states, n_decisions, per_state, loo_min, loo_max, n_nan
-- why: logits are stored before temperature, so both checks need no model. The first maximum is
--      slot 0 exactly when z0 equals the list maximum (slot 0 comes first). The first-slot metric
--      is hits / decisions, the mean of the per-state shares when every state has its 6 decisions
--      (an order-invariant model then gives exactly 20/60 = 1/3). S9.8: the per-state means and their
--      total are exactly rounded sums (lc_exact_mean_w, lc_exact_sum), a function of the decisions
--      alone, not of their order; hits count the decisions whose slot 0 wins (an integer). Only the
--      mean of one decision's own K logits is a list mean, in slot order (a per-decision formula).
WITH c AS (
    SELECT row_index, qid, split_part(qid, '/', 1) AS check_name, logits
    FROM cases
    WHERE run_id = $run_id AND split_part(qid, '/', 1) IN ('score_slot0_identical', 'score_first_slot_permuted')
), d AS (
    SELECT row_index, qid, check_name,
           CASE WHEN check_name = 'score_slot0_identical' THEN logits[1] - list_avg(logits)
                WHEN logits[1] = list_max(logits) THEN 1.0 ELSE 0.0 END AS x
    FROM c
), s AS (
    SELECT check_name, row_index, lc_exact_mean_w(x, 1) AS value, count(*) FILTER (WHERE x = 1.0) AS hits,
           count(*) AS n
    FROM d GROUP BY check_name, row_index
), l AS (
    SELECT check_name, list(value ORDER BY row_index) AS per_state, sum(hits) AS hits, sum(n) AS n_decisions,
           lc_exact_sum(value) AS total, count(*) AS n_states
    FROM s GROUP BY check_name
)
SELECT check_name,
       CASE WHEN check_name = 'score_first_slot_permuted' THEN hits / n_decisions
            ELSE total / n_states END AS metric,
       n_states, n_decisions, per_state,
       list_min(list_transform(per_state, lambda x: (total - x) / (n_states - 1))) AS loo_min,
       list_max(list_transform(per_state, lambda x: (total - x) / (n_states - 1))) AS loo_max,
       len(list_filter(per_state, lambda x: isnan(x))) AS n_nan
FROM l
ORDER BY check_name DESC
