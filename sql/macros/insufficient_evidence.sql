-- macro: lc_insufficient_evidence(lower, upper, margin) -- the interval cannot decide a change of size margin
-- spec: S9 (case-level diff), S9.5 (the paired bootstrap interval of the delta), S6.5 (a policy
--       rule's `on_insufficient`; laya-cases extensions)
-- method: true when the 95% interval [lower, upper] of the delta (B - A) reaches both -margin
--         and +margin (inclusive): the data fit a loss beyond the margin, no change, and a
--         gain beyond it alike, so neither "within margin" nor "beyond it" is supported. A
--         narrow interval around 0 with few discordant pairs is evidence of no change and is not
--         marked. Null when there is no interval (fewer than 2 usable replicates) or no margin.
-- params: none
CREATE OR REPLACE MACRO lc_insufficient_evidence(lower, upper, margin) AS
    CASE WHEN lower IS NULL OR upper IS NULL OR margin IS NULL THEN NULL
         ELSE lower <= -margin AND upper >= margin END;
