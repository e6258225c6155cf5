-- query: robustness_cases -- every presentation of a robustness run as the document's per-case record
-- spec: S7.13 (each variant records both label mappings and the slot-to-canonical indices), S7.14 (the
--       canonical vector, pred = first canonical argmax, confidence, correct), S7.15 (the pair beside its
--       baseline), S7.16 (`errors`, n_cases per language)
-- grain: one row per decision record of the run (error records included), ordered by row, then kind
--        (baseline, option_order, label_rename), then case id: the order does not depend on the files'
-- input: decisions (view over the warehouse), robustness_pairs (sql/robustness/pairs.sql)
-- params: run_id
-- output: language, row_index, case_id, kind, options, slot_order, presented_labels, presented_keys,
--         slot_options, probabilities, pred_index, pred_label, confidence, gold_index, gold_label, correct,
--         error, parent_case_id, agree, baseline_pred, baseline_confidence, mean_drift, max_drift, js,
--         confidence_drift (the pair columns null for a baseline, and for a variant without a pair: its
--         baseline is an error record, or its language failed)
-- why: the document's numbers are re-derivable from these records alone (tests/harness/
--      test_robustness_document.py): the pair columns are pairs.sql's own, joined, not recomputed;
--      presented_keys[j] = presented_labels[slot_order[j]] is the key shown at slot j and
--      slot_options[j] = options[slot_order[j]] the canonical key behind it (the two label mappings).
SELECT coalesce(d.language_key, '') AS language, d.row_index, d.case_id, d.variant AS kind,
       d.options, d.slot_order, d.presented_labels,
       CASE WHEN d.slot_order IS NOT NULL AND d.presented_labels IS NOT NULL
            THEN [d.presented_labels[i + 1] FOR i IN d.slot_order] END AS presented_keys,
       CASE WHEN d.slot_order IS NOT NULL AND d.options IS NOT NULL
            THEN [d.options[i + 1] FOR i IN d.slot_order] END AS slot_options,
       d.probabilities,
       CASE WHEN d.error IS NULL THEN list_position(d.options, d.predicted) - 1 END AS pred_index,
       CASE WHEN d.error IS NULL THEN d.predicted END AS pred_label,
       CASE WHEN d.error IS NULL THEN d.confidence END AS confidence,
       list_position(d.options, json_extract_string(d.expected_json, '$')) - 1 AS gold_index,
       json_extract_string(d.expected_json, '$') AS gold_label,
       CASE WHEN d.error IS NULL THEN d.correct END AS correct,
       d.error, d.parent_case_id,
       p.agree, p.baseline_pred, p.baseline_confidence, p.mean_drift, p.max_drift, p.js, p.confidence_drift
FROM decisions d
LEFT JOIN robustness_pairs p ON p.case_id = d.case_id
WHERE d.run_id = $run_id
ORDER BY d.row_index,
         CASE d.variant WHEN 'baseline' THEN 0 WHEN 'option_order' THEN 1 WHEN 'label_rename' THEN 2 ELSE 3 END,
         d.case_id, d.qid_pos
