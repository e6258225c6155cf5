-- table: case_fields -- a shortlist or tournament run's own fields of each case, as the reference report's cases carry them
-- spec: S7.18 (per qid: labels kept in rank order, scores, k, n, passthrough), S7.19 (shortlist_status),
--       S7.20 (tournament: the finalists, n and the elimination rounds; tournament_status)
-- grain: one row per case of the run that went through the narrowing runner (shortlist_labels set)
-- input: cases (view over the warehouse), runs (view over the warehouse)
-- params: run_id
-- output: row_index, qid_pos, fields_json (a JSON object: `shortlist` {k, labels, n, passthrough, scores}
--         and `shortlist_status`; for a tournament `tournament` {labels, n, rounds} and `tournament_status`)
-- case_fields_for: laya-shortlist-evals-report/1, laya-tournament-evals-report/1
-- why: the report adds these fields to a case by joining this table (report/cases.sql, case_texts.sql),
--      for runs of these config schemas only (catalogue.schema_case_fields). k and the group size are the
--      run's config; n is the case's label count; rounds replays S7.20's cut (ceil(m / g) winners per
--      round while m > g), which depends on n and g only.
WITH RECURSIVE run AS (
    SELECT json_extract_string(config_json, '$.schema') = 'laya-tournament-evals-report/1' AS tournament,
           CAST(json_extract(config_json, '$.shortlist.k') AS BIGINT) AS k,
           CAST(json_extract(config_json, '$.tournament.group_size') AS BIGINT) AS g
    FROM runs WHERE run_id = $run_id
), c AS (
    SELECT row_index, qid_pos, shortlist_labels AS labels, shortlist_scores AS scores, shortlist_status AS status,
           len(options) AS n
    FROM cases
    WHERE run_id = $run_id AND shortlist_labels IS NOT NULL
), cut(n, m, rounds) AS (
    SELECT DISTINCT n, n, 0 FROM c
    UNION ALL
    SELECT cut.n, (cut.m + run.g - 1) // run.g, cut.rounds + 1
    FROM cut, run WHERE run.tournament AND run.g >= 2 AND cut.m > run.g
), rounds AS (
    SELECT n, max(rounds) AS rounds FROM cut GROUP BY n
)
SELECT c.row_index, c.qid_pos,
       CASE WHEN run.tournament
            THEN json_object('tournament', json_object('labels', c.labels, 'n', c.n, 'rounds', r.rounds),
                             'tournament_status', c.status)
            ELSE json_object('shortlist', json_object('k', run.k, 'labels', c.labels, 'n', c.n,
                                                      'passthrough', run.k >= c.n, 'scores', c.scores),
                             'shortlist_status', c.status)
       END AS fields_json
FROM c CROSS JOIN run JOIN rounds r ON r.n = c.n
