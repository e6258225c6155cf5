-- query: stability_summary -- how stable K runs of one dataset are, overall and per group of the --by dimension
-- spec: S9 (case-level comparison across runs, a laya-cases extension); S3.3 (means are exact sums / n)
-- grain: one row per (dim, key): overall first, then the groups in key order
-- input: stability_slice_cases, stability_run_accuracy
-- params: none
-- output: dim, key, cases, compared (scored by 2+ runs), unstable (right in some runs, wrong in others),
--         unstable_rate (unstable / compared; null with no compared case), disagreeing (compared cases
--         whose runs gave 2+ different answers), failed_cases (cases a run failed on), mean_agreement
--         (mean over compared cases of n_modal / n_predicted), accuracy_mean (mean over compared cases
--         of p_correct: the accuracy a run is expected to show), accuracy_sd (sqrt(sum p(1-p)) / compared:
--         its spread if each case were right with probability p_correct, independently), expected_low,
--         expected_high (accuracy_mean -/+ 1.96 accuracy_sd, within [0, 1]), accuracy_floor (share of
--         compared cases every run got right), accuracy_ceiling (share some run got right), run_min,
--         run_max (the lowest and highest accuracy a run showed over the compared cases it scored),
--         delta_noise (1.96 sqrt(2 sum p(1-p)) / compared: half the 95% range of the accuracy delta between
--         two independent reruns, each case right with probability p_correct in each; `diff --reruns`)
-- why: greatest/least skip a null, hence the CASE; floor and ceiling bound what any single run over these cases could have shown; the expected range
--      is the rerun noise a delta between two runs should be read against.
WITH groups AS (
    SELECT dim, key, count(*) AS cases,
           count(*) FILTER (WHERE compared) AS compared,
           count(*) FILTER (WHERE unstable) AS unstable,
           count(*) FILTER (WHERE compared AND n_modal < n_predicted) AS disagreeing,
           count(*) FILTER (WHERE n_failed > 0) AS failed_cases,
           lc_exact_sum(CASE WHEN compared THEN agreement END) AS agreement_sum,
           lc_exact_sum(CASE WHEN compared THEN p_correct END) AS p_sum,
           lc_exact_sum(CASE WHEN compared THEN p_correct * (1 - p_correct) END) AS var_sum,
           count(*) FILTER (WHERE compared AND n_correct = n_scored) AS always_right,
           count(*) FILTER (WHERE compared AND n_correct > 0) AS ever_right
    FROM stability_slice_cases
    GROUP BY dim, key
),
runs AS (
    SELECT dim, key, min(accuracy) AS run_min, max(accuracy) AS run_max FROM stability_run_accuracy GROUP BY dim, key
),
rated AS (
    SELECT g.*, r.run_min, r.run_max,
           CASE WHEN compared > 0 THEN p_sum / compared END AS accuracy_mean,
           CASE WHEN compared > 0 THEN sqrt(var_sum) / compared END AS accuracy_sd
    FROM groups g LEFT JOIN runs r USING (dim, key)
)
SELECT dim, key, cases, compared, unstable,
       CASE WHEN compared > 0 THEN unstable / compared END AS unstable_rate,
       disagreeing, failed_cases,
       CASE WHEN compared > 0 THEN agreement_sum / compared END AS mean_agreement,
       accuracy_mean, accuracy_sd,
       CASE WHEN compared > 0 THEN greatest(0.0, accuracy_mean - 1.96 * accuracy_sd) END AS expected_low,
       CASE WHEN compared > 0 THEN least(1.0, accuracy_mean + 1.96 * accuracy_sd) END AS expected_high,
       CASE WHEN compared > 0 THEN always_right / compared END AS accuracy_floor,
       CASE WHEN compared > 0 THEN ever_right / compared END AS accuracy_ceiling,
       run_min, run_max,
       CASE WHEN compared > 0 THEN 1.96 * sqrt(2 * var_sum) / compared END AS delta_noise
FROM rated
ORDER BY dim <> 'overall', dim, key
