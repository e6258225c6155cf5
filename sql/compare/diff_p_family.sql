-- table: p_family -- the diff's McNemar tests, one family per slice dimension, for adjusted_p.sql
-- spec: S9 (case-level diff), S8.9 (exact McNemar per slice)
-- grain: one row per (dim, key) group of diff_slices other than overall
-- input: diff_slices
-- params: none
-- output: family (the dimension), member (the key), p (null where the group has no discordant pair)
-- why: the --by groups are the m tests run at once; the overall test is one test, not adjusted. A
--      group without a discordant pair has p = 1 whatever the runs did, so it is no test.
SELECT dim AS family, key AS member,
       CASE WHEN right_to_wrong + wrong_to_right > 0 THEN mcnemar_p END AS p
FROM diff_slices
WHERE dim <> 'overall'
