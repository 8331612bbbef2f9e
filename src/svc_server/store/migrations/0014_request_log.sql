-- The request log (issue 25): the calls of each account's API keys, successful or
-- refused, written in batches by each server process (svc_server.services.request_log)
-- and read by the dashboard. Kept 7 days and at most 1,000 rows per account
-- (svc_core.accounts.requestlog); older and surplus rows are deleted at each batch.
-- `path` includes the query string, cut to 512 characters; `error_code` is the error
-- body's code of a failed call (INVALID_PARAMS, RATE_LIMITED ...). Accounts file on SQLite.
CREATE TABLE request_log (
    id TEXT PRIMARY KEY,
    consumer_id TEXT NOT NULL,
    key_id TEXT NOT NULL,
    at_ms BIGINT NOT NULL,
    method TEXT NOT NULL,
    path TEXT NOT NULL,
    status INTEGER NOT NULL,
    error_code TEXT,
    request_id TEXT NOT NULL,
    duration_ms DOUBLE PRECISION NOT NULL
);
CREATE INDEX request_log_consumer ON request_log (consumer_id, at_ms);
CREATE INDEX request_log_at ON request_log (at_ms);
-- Successful counted calls per API key and UTC month (the dashboard's usage per key),
-- added from the same batches.
CREATE TABLE key_usage (
    key_id TEXT NOT NULL,
    month TEXT NOT NULL,
    count BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (key_id, month)
);
