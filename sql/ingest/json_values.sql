-- macro: lc_json_number(v), lc_json_big_int(v), lc_json_exact_number(v, x), lc_json_exact(v), lc_json_token(v), lc_json_str(v), lc_json_plain(t), lc_json_spaced(t), lc_json_flat(t) -- JSON values as Python reads and writes them
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
-- an int's digits are its text, a string without a \u escape is its text (as lc_json_plain), null for a
-- container or a \u escape
CREATE OR REPLACE MACRO lc_json_token(v) AS
    CASE json_type(v) WHEN 'VARCHAR' THEN CASE WHEN NOT contains(CAST(v AS VARCHAR), '\u') THEN CAST(v AS VARCHAR) END
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

-- a DuckDB JSON text that is also json.dumps's compact text (separators ',' ':'): no \u escape (DuckDB
-- writes \u001B where Python writes \u001b; its other escapes are Python's), and no float that DuckDB
-- writes otherwise than repr() (an exponent, below 1e-4, from 1e16)
CREATE OR REPLACE MACRO lc_json_plain(t) AS
    NOT contains(t, '\u') AND NOT regexp_matches(t, '[0-9][eE]|(^|[^0-9])0\.0000|(^|[^.0-9])[0-9]{17}');

-- json.dumps's own separators (', ' and ': ') in a plain text, outside its strings: where no string holds
-- ',' or ':', every one (the common case, and the fastest); else in the pieces between quotes that lie
-- outside strings (every other piece, as no '\"' escape is there to mislead the count: null if one is)
CREATE OR REPLACE MACRO lc_json_spaced(t) AS
    CASE WHEN contains(t, '\"') THEN NULL
         WHEN regexp_full_match(t, '(?:[^"]|"[^",:]*")*') THEN replace(replace(t, ',', ', '), ':', ': ')
         ELSE array_to_string(list_transform(string_split(t, '"'), lambda piece, i:
                  CASE WHEN i % 2 = 1 THEN replace(replace(piece, ',', ', '), ':', ': ') ELSE piece END), '"') END;

-- a plain JSON text without '\"', of no object below its top (so no key repeated below it) and no key
-- repeated at its top: DuckDB's text of it and lc_json_spaced's are json.dumps's of json.loads's value, key
-- order and all (a '{' in a string only sends the text to Python)
CREATE OR REPLACE MACRO lc_json_flat(t) AS
    lc_json_plain(t) AND NOT contains(t, '\"') AND NOT contains(substr(t, 2), '{')
    AND (json_type(t) <> 'OBJECT' OR len(list_distinct(json_keys(t))) = len(json_keys(t)));
