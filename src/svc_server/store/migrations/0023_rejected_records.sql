-- What was rejected leaves a trace (issue 42). Portable SQL.
--
-- rejected_records holds every record a load rejected as malformed (an amount such as
-- `27,0000000`, a date that does not exist, ...) with the district and month its natural
-- key names, the types the reader could tell of it (NULL when it could not), the reason
-- and detail the load report gives, its line (or item ordinal), the file and the load.
-- Such a record is in no figure: _meta.rejected_rows counts them per district-month and
-- the transactions listing with include_excluded=true lists them. Loads before this
-- migration kept none: their rejections show once the file is loaded again.
CREATE TABLE rejected_records (
    natural_key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    sigungu_code TEXT NOT NULL,
    month TEXT NOT NULL,
    property_type TEXT,
    transaction_type TEXT,
    reason TEXT NOT NULL,
    detail TEXT NOT NULL,
    line BIGINT NOT NULL,
    path TEXT NOT NULL,
    load_id TEXT NOT NULL
);
CREATE INDEX rejected_records_place ON rejected_records (sigungu_code, month);
