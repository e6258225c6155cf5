-- table: p_family -- the policy's McNemar tests as one family, for compare/adjusted_p.sql
-- spec: S6.5 (`significant_at`, `adjust`: laya-cases extensions), S8.9
-- grain: one row per significant_at rule
-- input: policy_measures
-- params: none
-- output: family ('policy'), member (the rule's position as text), p (null where the rule's slice
--         has no discordant pair: no test)
-- why: every significant_at rule is one test of the policy, whichever adjustment it reads, so the
--      family is all of them: a rule cannot shrink m by not asking for an adjustment.
SELECT 'policy' AS family, CAST(pos AS VARCHAR) AS member,
       CASE WHEN right_to_wrong + wrong_to_right > 0 THEN p_value END AS p
FROM policy_measures
WHERE significant_at IS NOT NULL
