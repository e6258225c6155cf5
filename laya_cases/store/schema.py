"""The decision schema: one Arrow row per (run, dataset row, question id).

Every column a report needs is here, so no metric ever needs the model again. Columns are
described once, in COLUMNS below; docs/schema.md is checked against this list by a test.
The run id is the Hive partition key (`cases/run_id=<id>/`), not a column in the files.
"""
from __future__ import annotations

# pyarrow is imported when a schema object is first asked for (module __getattr__ below): importing it
# costs ~0.15 s, and `laya-cases runs`, `sql` and the footer check need only the names and types here.

#: /2 dropped the stored choice_accuracy / noul_accuracy columns: that per-case value is derived from
#: `correct` and `answer_type` in SQL (sql/macros/accuracy_value.sql), defined once. Runs written as /1
#: keep the two columns in their files; the views read files by column name, so both versions mix.
#: /3 added the benchmark columns (item_id .. truncated, null unless a harness fills them); older runs
#: read them as null. source_item_id joined them later the same way (optional, null in older /3 runs).
SCHEMA_VERSION = "laya-cases-decision/3"

#: Column types by their Arrow names (str() of the pyarrow type); arrow_type() and duck_type() resolve them.
_S, _F, _I, _B = "string", "double", "int64", "bool"


def _list(kind: str) -> str:
    return "list<%s>" % kind


#: (name, type, description). Order is the file's column order.
COLUMNS = [
    # where the case comes from
    ("case_id", _S, "Stable across runs of the same dataset: digest of (state, qid, question body), "
                    "plus `#n` for the n-th repeat; runs join on it."),
    ("row_index", _I, "0-based position of the row among the dataset's kept rows."),
    ("line_no", _I, "1-based physical line of the row in the dataset file (S1.1)."),
    ("qid", _S, "Question id (a key of the row's `expected`); null on a row-level error record."),
    ("qid_pos", _I, "Position of the qid in the row's `expected` (reference case order)."),
    ("question_type", _S, "The question body's declared `type` (choice/score/noul or as written)."),
    ("instructions", _S, "Instructions as the model reads them (non-string: its JSON text, S2.2)."),
    ("options", _list(_S), "Option keys in canonical order: choice labels, score levels `0`.., "
                              "noul `false`,`true`."),
    ("option_texts", _list(_S), "Rendered option texts the model reads (S2.3)."),
    # the label
    ("expected_json", _S, "The gold label as JSON text, in its original JSON type."),
    ("expected_kind", _S, "string / bool / number / null / other."),
    # the answer
    ("answer_type", _S, "The answer's own `type`; correctness dispatches on it (S2.9)."),
    ("answer_json", _S, "The raw answer object as JSON text, unmodified."),
    ("predicted", _S, "Predicted value as text: choice label, `true`/`false` (noul >= 0.5), or score."),
    ("probabilities", _list(_F), "Per-option probability aligned with `options` (null where absent)."),
    ("noul_p", _F, "P(true) of a noul answer."),
    ("score_value", _F, "Expected level of a score answer."),
    ("answer_confidence", _F, "The answer's `answer_confidence` field when numeric (S2.5)."),
    ("confidence_field", _F, "The answer's `confidence` field when numeric (entropy-based on choice/score)."),
    ("confidence", _F, "The confidence the metrics read (S2.7); null when none."),
    ("confidence_source", _S, "Which link supplied it: answer_confidence, confidence, noul, probabilities."),
    ("gate_confidence", _F, "The confidence the abstention gate reads (S2.8); null when none."),
    ("correct", _B, "Correctness (S2.9); null when unscored."),
    ("score_mae", _F, "Evaluator value (S3.6): |score - label|; score_within_X reads it too."),
    ("abstention", _S, "passed / abstained / unevaluated when a --min-confidence was set (S6.11)."),
    ("abstention_threshold", _F, "The threshold that decided `abstention`."),
    # slices
    ("language", _S, "The row's `language` as JSON text (raw)."),
    ("language_key", _S, "Slice key: Python str() of the language; null when none (S4.1)."),
    ("model", _S, "The effective model (S4.3) as JSON text (raw value)."),
    ("model_key", _S, "Effective model (S4.3) as slice key; null when none."),
    ("tags", _list(_S), "Tag slice keys (Python str() of each element)."),
    ("slice_set", _I, "Dense id, within the run, of the case's (language_key, model_key, qid, tags, "
                      "answer_type, correct) combination: the report groups by (slice_set, confidence) "
                      "instead of six columns and a list."),
    # the call
    ("call_id", _I, "Which runner call produced the answer (rows of one chunk share it)."),
    ("call_ms", _F, "Wall time of that call in ms (null for recorded answers without a latency)."),
    ("chunk_size", _I, "Rows in that call."),
    ("call_returned", _B, "Whether the call returned (false on an error record)."),
    ("error", _S, "Error text for a failed row or a missing answer; such records are not cases."),
    # room for later capabilities (null until used)
    ("parent_case_id", _S, "Metamorphic variant: the case it was derived from."),
    ("variant", _S, "Metamorphic variant kind (baseline, option_order, label_rename)."),
    ("shortlist_status", _S, "Shortlist retrieval status (correct, retrieval_miss, decision_miss)."),
    ("raw_text", _S, "Raw generated text of a generative runner."),
    ("parsed", _B, "Whether the raw text parsed to a verdict (false: unparsed, never guessed)."),
    ("relevance_score", _F, "Normalised relevance/yes score of a scoring model."),
    ("temperature", _F, "Temperature applied to this decision's logits."),
    ("temperature_bucket", _S, "Temperature bucket `<type>:<size>` (S2.6)."),
    # benchmark columns (/3): harnesses fill them, everything else leaves them null
    ("item_id", _S, "Item id from the row's `item_id`. MASSIVE: its `id`, the same utterance in every language "
                    "(cross-lingual metrics join on it); relevance: `<language>/<source_item_id>`, unique "
                    "across languages (the benchmark's ADR-0004)."),
    ("source_item_id", _S, "Language-neutral source item id from the row's `source_item_id` (relevance, "
                           "S8.1): the rows of one source item join across languages on it. Added within "
                           "/3: null in runs written before it."),
    ("logits", _list(_F), "Raw logits per option in canonical order, before temperature (runners "
                             "that expose them): clamped and unclamped regimes re-derive from them."),
    ("temperature_clamped", _F, "The bucket's temperature as the agent serves it (clamped, S2.6)."),
    ("temperature_unclamped", _F, "The bucket's temperature as the checkpoint stores it (S7.4)."),
    ("slot_order", _list(_I), "Variant: the canonical option index shown at each presented slot (S7.13)."),
    ("presented_labels", _list(_S), "Variant: the key shown for each canonical option (label_rename), "
                                       "aligned with `options`."),
    ("shortlist_labels", _list(_S), "Shortlist: the labels kept, in rank order (S7.18)."),
    ("shortlist_scores", _list(_F), "Shortlist: their cosine scores; null on pass-through."),
    ("no_score", _F, "Normalised no score of a scoring model (S8.5)."),
    ("native_score", _F, "The scoring model's native score (logit, cosine, ...) (S8.5)."),
    ("truncated", _B, "A generation that exhausted its token budget (S8.3)."),
    ("state_json", _S, "The row's state as compact JSON, for harnesses whose per-case record includes it (S7.7)."),
]

#: Columns every readable case file has; the ones /3 added are optional (older runs read them as null).
REQUIRED_COLUMNS = [name for name, _, _ in COLUMNS[:[n for n, _, _ in COLUMNS].index("item_id")]]


#: The runs table: one row per committed run.
RUN_COLUMNS = [
    ("run_id", _S, "The run id (also the partition key of its cases)."),
    ("schema_version", _S, "Decision schema version the run was written with."),
    ("created_at", _S, "UTC commit time (ISO 8601). Never part of a report."),
    ("kind", _S, "How the decisions were made: `ingest` (recorded answers) or `run` (a runner)."),
    ("dataset", _S, "Dataset path as typed (a name, not an identity)."),
    ("dataset_sha256", _S, "SHA-256 of the dataset file's bytes (S5.1); null without a dataset file."),
    ("labelled_rows_sha256", _S, "Digest of the labelled rows without answers (docs/identity.md)."),
    ("questions_sha256", _S, "Question schema digest (S5.2)."),
    ("model_id", _S, "Model/runner id as given."),
    ("model_revision", _S, "Revision actually loaded, when known."),
    ("runner", _S, "Runner kind."),
    ("n_rows", _I, "Dataset rows."),
    ("n_cases", _I, "Cases written."),
    ("n_errors", _I, "Error records written."),
    ("config_json", _S, "The report's reference-shaped `config` block (JSON)."),
    ("settings_json", _S, "Run settings and library versions (JSON)."),
]

#: The inputs table (inputs/<labelled_rows_sha256>.parquet): each dataset row's labelled content, kept once per
#: labelled-rows digest (store/inputs.py), so every run of the dataset shows its inputs.
INPUT_COLUMNS = [
    ("labelled_rows_sha256", _S, "The digest the rows belong to (the runs table's column)."),
    ("row_index", _I, "0-based position among the dataset's rows (the decisions' row_index)."),
    ("row_json", _S, "The row's state, questions, expected, language, tags and model as compact JSON: the "
                     "line the digest hashes (docs/identity.md)."),
]

#: The slice_sets table (slice_sets/run_id=<id>/*.parquet): what each `slice_set` id of a run stands for.
SLICE_SET_COLUMNS = ["slice_set", "language_key", "model_key", "qid", "tags", "answer_type", "correct"]


def arrow_type(kind: str):
    """The pyarrow type of a type name above ("string", "list<double>", ...)."""
    import pyarrow as pa

    if kind.startswith("list<"):
        return pa.list_(arrow_type(kind[5:-1]))
    return {"string": pa.string(), "double": pa.float64(), "int64": pa.int64(), "bool": pa.bool_()}[kind]


def duck_type(kind: str) -> str:
    """The DuckDB type of a type name above (what a Parquet file of that Arrow type reads as)."""
    if kind.startswith("list<"):
        return duck_type(kind[5:-1]) + "[]"
    return {"string": "VARCHAR", "double": "DOUBLE", "int64": "BIGINT", "bool": "BOOLEAN"}[kind]


def float_columns(schema) -> set:
    """The names of a pyarrow schema's columns that hold floating-point values (lists of them included):
    those written without Parquet min/max statistics (store_write.parquet_options says why)."""
    import pyarrow as pa

    def has_float(t) -> bool:
        return pa.types.is_floating(t) or (pa.types.is_list(t) and has_float(t.value_type))
    return {f.name for f in schema if has_float(f.type)}


def __getattr__(name: str):
    """DECISION_SCHEMA, RUN_SCHEMA, SLICE_SET_SCHEMA, INPUT_SCHEMA: pyarrow schemas, built (and pyarrow imported)
    on first use; `from laya_cases.store.schema import DECISION_SCHEMA` works as for a plain constant."""
    if name not in ("DECISION_SCHEMA", "RUN_SCHEMA", "SLICE_SET_SCHEMA", "INPUT_SCHEMA"):    # e.g. __path__
        raise AttributeError("module %r has no attribute %r" % (__name__, name))
    import pyarrow as pa

    if name == "DECISION_SCHEMA":
        value = pa.schema([pa.field(n, arrow_type(kind)) for n, kind, _ in COLUMNS],
                          metadata={b"schema": SCHEMA_VERSION.encode()})
    elif name == "RUN_SCHEMA":
        value = pa.schema([pa.field(n, arrow_type(kind)) for n, kind, _ in RUN_COLUMNS])
    elif name == "INPUT_SCHEMA":
        value = pa.schema([pa.field(n, arrow_type(kind)) for n, kind, _ in INPUT_COLUMNS])
    else:
        decision = globals().get("DECISION_SCHEMA") or __getattr__("DECISION_SCHEMA")
        value = pa.schema([decision.field(n) for n in SLICE_SET_COLUMNS])
    globals()[name] = value
    return value
