-- macro: lc_json_number(v), lc_json_big_int(v), lc_json_exact_number(v, x), lc_json_exact(v), lc_json_token(v), lc_json_str(v), lc_json_plain(t), lc_json_spaced(t) -- JSON values as Python reads and writes them
-- spec: S1.1 (a line is read as json.loads reads it), S1.2 (str() of a language, model or tag value),
--       S2.4 (the stored answer and label texts are json.dumps of the values)
-- why: `ingest` reads any spelling of an answers file column-wise (sql/ingest/answers_loose.sql): DuckDB
--      parses the line, and these macros give each value as the per-row path (json.loads, then json.dumps
--      or str()) would, or null where they cannot (the line then goes through the per-row path).
-- params: none

-- float() of a JSON number (a boolean is not a number: null)
CREATE OR REPLACE MACRO lc_json_number(v) AS
    CASE WHEN json_type(v) IN ('BIGINT', 'UBIGINT', 'DOUBLE') THEN TRY_CAST(v AS DOUBLE) END;

-- an integer beyond 64 bits, which DuckDB holds as a double: its text keeps the digits, as Python's int does
CREATE OR REPLACE MACRO lc_json_big_int(v) AS
    regexp_full_match(CAST(v AS VARCHAR), '-?[0-9]+');

-- a finite number that float() reads as DuckDB does, given x = lc_json_number(v): an int of 15 digits or
-- more is left to Python (a CASE, so that only such numbers' texts are looked at)
CREATE OR REPLACE MACRO lc_json_exact_number(v, x) AS
    CASE WHEN abs(x) < 1e15 THEN true
         WHEN isfinite(x) THEN json_type(v) = 'DOUBLE' AND NOT lc_json_big_int(v)
         ELSE false END;

CREATE OR REPLACE MACRO lc_json_exact(v) AS lc_json_exact_number(v, lc_json_number(v));

-- json.dumps of a scalar: DuckDB's double -> VARCHAR is Python's repr() (checked when the reader connects),
-- an int's digits are its text, a string without escapes is its text, null for a container or an escape
CREATE OR REPLACE MACRO lc_json_token(v) AS
    CASE json_type(v) WHEN 'VARCHAR' THEN CASE WHEN NOT contains(CAST(v AS VARCHAR), '\') THEN CAST(v AS VARCHAR) END
                      WHEN 'DOUBLE' THEN CASE WHEN lc_json_big_int(v) THEN CAST(v AS VARCHAR)
                                              ELSE CAST(TRY_CAST(v AS DOUBLE) AS VARCHAR) END
                      WHEN 'OBJECT' THEN NULL
                      WHEN 'ARRAY' THEN NULL
                      ELSE CAST(v AS VARCHAR) END;

-- str() of a string or number (S1.2 group key), else null
CREATE OR REPLACE MACRO lc_json_str(v) AS
    CASE json_type(v) WHEN 'VARCHAR' THEN v ->> '$'
                      WHEN 'BIGINT' THEN CAST(v AS VARCHAR)
                      WHEN 'UBIGINT' THEN CAST(v AS VARCHAR)
                      WHEN 'DOUBLE' THEN CASE WHEN lc_json_big_int(v) THEN CAST(v AS VARCHAR)
                                              ELSE CAST(TRY_CAST(v AS DOUBLE) AS VARCHAR) END END;

-- a DuckDB JSON text that is also json.dumps's compact text (separators ',' ':'): no escape, and no float
-- that DuckDB writes otherwise than repr() (an exponent, below 1e-4, from 1e16)
CREATE OR REPLACE MACRO lc_json_plain(t) AS
    NOT contains(t, '\') AND NOT regexp_matches(t, '[0-9][eE]|(^|[^0-9])0\.0000|(^|[^.0-9])[0-9]{17}');

-- json.dumps's own separators (', ' and ': ') in a plain text whose strings hold neither ',' nor ':'
CREATE OR REPLACE MACRO lc_json_spaced(t) AS
    CASE WHEN regexp_full_match(t, '(?:[^"]|"[^",:]*")*') THEN replace(replace(t, ',', ', '), ':', ': ') END;
