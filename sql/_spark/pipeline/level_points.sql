-- table: level_points -- per group, the aurc and the few levels a published cut or curve point can fall on
-- spec: S3.14 (aurc), S3.13 (the cut at coverage c), S9.3 (the curve's published points), S3.12 (levels)
-- grain: one row per kept (gid, level), as sql/pipeline/level_points.sql keeps them
-- input: levels, level_starts
-- params: coverages (the coverages whose cuts the report takes, e.g. [0.5, 0.8])
-- output: gid, N, n_levels, aurc, level, conf, rows, hits, accepted, cum_hits
-- engine: spark (overrides sql/pipeline/level_points.sql, which reads `levels` once as it streams out of its
--         sort, gathering the kept levels in a list per group and testing the asked-for coverages with a
--         lambda. Spark checkpoints `levels` as a table, so here it is read twice, the kept levels are a
--         filter and the asked-for coverages a join; the same rows: tests/query/test_levels_order.py)
WITH lv AS (
    SELECT l.gid, l.level, l.conf, l.rows, l.hits, l.accepted, l.cum_hits, l.N, s.n_levels
    FROM levels l JOIN level_starts s ON l.gid = s.gid
), kc AS (
    SELECT s.gid, cs.c * CAST(s.N AS DOUBLE) AS x
    FROM level_starts s, (SELECT unnest(CAST($coverages AS DOUBLE[])) AS c) cs
    WHERE cs.c > 0.0 AND cs.c <= 1.0 AND CAST(round(cs.c * 1000.0) AS DOUBLE) / 1000.0 <> cs.c
), near AS (
    SELECT DISTINCT lv.gid, lv.level
    FROM lv JOIN kc ON lv.gid = kc.gid AND kc.x > CAST(lv.accepted - lv.rows AS DOUBLE) - 3.0
                   AND kc.x < CAST(lv.accepted AS DOUBLE) + 3.0
), per_group AS (
    SELECT gid, count(*) AS n_levels,
           lc_exact_sum(lc_risk(cum_hits, accepted) * CAST(rows AS DOUBLE)) / CAST(any_value(N) AS DOUBLE) AS aurc
    FROM lv
    GROUP BY gid
)
SELECT lv.gid, lv.N, p.n_levels, p.aurc, lv.level, lv.conf, lv.rows, lv.hits, lv.accepted, lv.cum_hits
FROM lv JOIN per_group p ON lv.gid = p.gid LEFT JOIN near n ON lv.gid = n.gid AND lv.level = n.level
WHERE lv.level = 1 OR lv.n_levels <= 1000 OR lv.accepted - lv.rows < 2
   OR (1000 * (lv.accepted + 2) - 1) // lv.N > (1000 * (lv.accepted - lv.rows - 2)) // lv.N
   OR n.level IS NOT NULL
