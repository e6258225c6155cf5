-- table: level_points -- per group, the aurc and the few levels a published cut or curve point can fall on
-- spec: S3.14 (aurc: each level's risk weighted by its cases, over N; exact sum), S3.13 (the cut at coverage c
--       is the first level with accepted >= k, k = max(1, ceil(c * N)) in binary64), S9.3 (the curve's
--       published points: level 1, the cut at each asked-for coverage and at each j/1000), S3.12 (levels)
-- grain: one row per kept (gid, level): level 1; every level of a group with at most 1,000 levels; and
--        every level whose cases (accepted - rows, accepted] lie within 2 cases of j * N / 1000 for some
--        integer j, or within 3 of c * N for a coverage c in $coverages. The group's N, n_levels and aurc
--        are repeated on each of its rows.
-- input: levels, level_starts
-- params: coverages (the coverages whose cuts the report takes, e.g. [0.5, 0.8])
-- output: gid, N, n_levels, aurc, level, conf, rows, hits, accepted, cum_hits
-- why: `levels` has one row per case per group with full-precision confidences (39M at 10M decisions), yet
--      its readers in the report need the sum of every level's risk (aurc) and a handful of levels each.
--      Materialising `levels` and reading it back once per reader cost most of a report under the memory
--      limit (each read of the spilled table: 4-7 s at 10M). Here `levels` is read once, as it streams out of
--      its one sort (it is a view: docs/scale.md), and what is kept is small: the aurc's exact sum per group
--      (the same expression as before, a function of the multiset alone) and a superset of the levels any
--      cut reads. The readers (aurc, selective_accuracy, risk_coverage) pick their level exactly as they did
--      over `levels`, so the superset only has to hold it: the cut of k holds k, accepted - rows < k <= accepted,
--      and for c = j/1000 and N below 4e15, ceil(c * N) in binary64 is within 1 of j * N / 1000, so j * N / 1000
--      lies strictly inside (accepted - rows - 2, accepted + 2): the integer test below. An asked-for c that is
--      some j/1000 in binary64 (0.5, 0.8) has that cut; for any other c, c * N in binary64 lies in
--      (accepted - rows, accepted] itself, and the list test (evaluated only for such c: a lambda per level
--      costs a third of this file at 2M decisions) keeps a margin of 3.
--      BIGINT arithmetic: 1000 * (accepted + 2) fits below 9.2e15 cases.
WITH xs AS (
    SELECT s.gid, s.n_levels,
           list(cs.c * CAST(s.N AS DOUBLE))
               FILTER (WHERE cs.c > 0.0 AND cs.c <= 1.0 AND CAST(round(cs.c * 1000.0) AS DOUBLE) / 1000.0 <> cs.c) AS xs
    FROM level_starts s LEFT JOIN (SELECT unnest(CAST($coverages AS DOUBLE[])) AS c) cs ON TRUE
    GROUP BY s.gid, s.n_levels
), per_group AS (
    SELECT gid, any_value(N) AS N, count(*) AS n_levels,
           lc_exact_sum(lc_risk(cum_hits, accepted) * CAST(rows AS DOUBLE)) / CAST(any_value(N) AS DOUBLE) AS aurc,
           list({'level': level, 'conf': conf, 'rows': rows, 'hits': hits, 'accepted': accepted, 'cum_hits': cum_hits})
               FILTER (WHERE keep) AS points
    FROM (SELECT l.gid, l.level, l.conf, l.rows, l.hits, l.accepted, l.cum_hits, l.N,
                 (l.level = 1 OR x.n_levels <= 1000 OR l.accepted - l.rows < 2
                  OR (1000 * (l.accepted + 2) - 1) // l.N > (1000 * (l.accepted - l.rows - 2)) // l.N
                  OR (x.xs IS NOT NULL AND len(list_filter(x.xs, lambda v: v > CAST(l.accepted - l.rows AS DOUBLE) - 3.0
                                                                        AND v < CAST(l.accepted AS DOUBLE) + 3.0)) > 0)) AS keep
          FROM levels l JOIN xs x USING (gid)) marked
    GROUP BY gid
)
SELECT gid, N, n_levels, aurc, unnest(points, recursive := true) FROM per_group
