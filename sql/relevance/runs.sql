-- table: rel_runs -- the relevance runs a benchmark reads, with their recorded S8.10 facts
-- spec: S8.10 (recorded run facts, under settings_json.relevance), S8.1 (one run per model and language)
-- grain: one row per selected committed run whose settings carry a `relevance` object
-- input: runs
-- params: run_ids (the selected run ids, a VARCHAR list)
-- output: run_id, model_id, language, mode, benchmark_sha256, prompt_sha256, model_revision, runtime,
--         generation_mode, package_version, duration_seconds, items (scored by the process whose clock
--         duration_seconds is: after --resume, the resumed part only), throughput_items_per_second,
--         peak_vram_bytes, decision_rule
SELECT run_id,
       json_extract_string(settings_json, '$.relevance.model_name') AS model_id,
       json_extract_string(settings_json, '$.relevance.language') AS language,
       json_extract_string(settings_json, '$.relevance.mode') AS mode,
       json_extract_string(settings_json, '$.relevance.benchmark_sha256') AS benchmark_sha256,
       json_extract_string(settings_json, '$.relevance.prompt_sha256') AS prompt_sha256,
       model_revision,
       json_extract_string(settings_json, '$.relevance.runtime') AS runtime,
       json_extract_string(settings_json, '$.relevance.generation_mode') AS generation_mode,
       json_extract_string(settings_json, '$.relevance.package_version') AS package_version,
       CAST(json_extract(settings_json, '$.relevance.duration_seconds') AS DOUBLE) AS duration_seconds,
       CAST(json_extract(settings_json, '$.relevance.items') AS BIGINT) AS items,
       CAST(json_extract(settings_json, '$.relevance.throughput_items_per_second') AS DOUBLE)
           AS throughput_items_per_second,
       CAST(json_extract(settings_json, '$.relevance.peak_vram_bytes') AS BIGINT) AS peak_vram_bytes,
       json_extract_string(settings_json, '$.relevance.decision_rule') AS decision_rule
FROM runs
WHERE list_contains($run_ids, run_id) AND json_extract(settings_json, '$.relevance') IS NOT NULL
