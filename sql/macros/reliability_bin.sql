-- macro: lc_reliability_bin(conf) -- the S3.10 bin (0..14) of a confidence, NULL when it is in no bin;
--        lc_too_small_bin(n_b) -- whether a bin holds too few cases to read its accuracy
-- spec: S3.10 (edges i/15 in binary64; bin 0 closed both ends, bin b >= 1 is (e_b, e_b+1]; values
--       outside [0, 1], NaN and NULL are in no bin)
-- why: the bin is the count of interior edges e_1..e_14 strictly below c (never ceil(15c) - 1); one
--      definition for the report's cells, the bootstrap's and the robustness quality cells. A bin of
--      fewer than 10 cases is too small to read: its accuracy's standard error can reach 0.17 (9 cases at
--      0.5), larger than most calibration gaps, so its gap is a count, not a rate (empty bins too).
-- params: none
CREATE OR REPLACE MACRO lc_reliability_bin(c) AS CASE WHEN c >= 0.0 AND c <= 1.0 THEN
        CAST(c > CAST(1 AS DOUBLE) / 15.0 AS INTEGER)
     +  CAST(c > CAST(2 AS DOUBLE) / 15.0 AS INTEGER)
     +  CAST(c > CAST(3 AS DOUBLE) / 15.0 AS INTEGER)
     +  CAST(c > CAST(4 AS DOUBLE) / 15.0 AS INTEGER)
     +  CAST(c > CAST(5 AS DOUBLE) / 15.0 AS INTEGER)
     +  CAST(c > CAST(6 AS DOUBLE) / 15.0 AS INTEGER)
     +  CAST(c > CAST(7 AS DOUBLE) / 15.0 AS INTEGER)
     +  CAST(c > CAST(8 AS DOUBLE) / 15.0 AS INTEGER)
     +  CAST(c > CAST(9 AS DOUBLE) / 15.0 AS INTEGER)
     +  CAST(c > CAST(10 AS DOUBLE) / 15.0 AS INTEGER)
     +  CAST(c > CAST(11 AS DOUBLE) / 15.0 AS INTEGER)
     +  CAST(c > CAST(12 AS DOUBLE) / 15.0 AS INTEGER)
     +  CAST(c > CAST(13 AS DOUBLE) / 15.0 AS INTEGER)
     +  CAST(c > CAST(14 AS DOUBLE) / 15.0 AS INTEGER)
    END;
CREATE OR REPLACE MACRO lc_too_small_bin(n_b) AS n_b < 10;
