-- metric: ece -- expected calibration error, 15 equal-width bins
-- spec: S3.10 (N counts every paired case; a group with only unbinned cases publishes 0.0),
--       S9.8 (bin terms summed in bin order, left to right), S9.2 (n_paired and unbinned counts)
-- grain: one row per (dim, key) group with paired cases
-- input: reliability
-- params: none
-- kind: paired
-- order_dependent: yes
-- family: calibration 2
-- output: dim, key, metric, value, n_paired, n_unbinned_out_of_range, n_unbinned_nan
SELECT dim, key, 'ece' AS metric,
       -- a left fold in bin order (SQL + is left-associative); an empty bin adds 0.0, a no-op
       0.0
         + coalesce(max(contribution) FILTER (WHERE bin = 0), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 1), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 2), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 3), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 4), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 5), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 6), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 7), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 8), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 9), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 10), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 11), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 12), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 13), 0.0)
         + coalesce(max(contribution) FILTER (WHERE bin = 14), 0.0)
         AS value,
       any_value(n_paired) AS n_paired,
       any_value(n_unbinned_out_of_range) AS n_unbinned_out_of_range,
       any_value(n_unbinned_nan) AS n_unbinned_nan
FROM reliability
GROUP BY dim, key
