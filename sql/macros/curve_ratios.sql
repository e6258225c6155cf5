-- macro: lc_coverage(accepted, n), lc_risk(cum_hits, accepted) and lc_selective_accuracy(cum_hits, accepted)
--        -- the ratios of a point of the risk-coverage curve
-- spec: S9.3 (the curve: coverage accepted / N, risk 1 - hits / accepted), S9.2 (selective accuracy, the
--       coverage a cut reaches), S3.14 (aurc weighs each level's risk)
-- why: the one definition of each ratio, in binary64 and in this order: `levels` keeps the counts only,
--      and its readers (aurc, selective_accuracy, risk_coverage and its Spark version) compute the
--      ratios for the rows they keep.
-- params: none
CREATE OR REPLACE MACRO lc_coverage(accepted, n) AS CAST(accepted AS DOUBLE) / CAST(n AS DOUBLE);
CREATE OR REPLACE MACRO lc_risk(cum_hits, accepted) AS 1.0 - CAST(cum_hits AS DOUBLE) / CAST(accepted AS DOUBLE);
CREATE OR REPLACE MACRO lc_selective_accuracy(cum_hits, accepted) AS CAST(cum_hits AS DOUBLE) / CAST(accepted AS DOUBLE);
