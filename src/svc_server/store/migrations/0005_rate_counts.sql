-- Per-bucket summary of the sliding log: how many stamps it holds and the newest one.
-- Admission reads one row instead of counting the window (a count grew with the
-- traffic: a consumer at 5,000 calls a minute made every call count 5,000 index
-- entries), and the newest stamp keeps a bucket's stamps in order (see
-- AccountsRepo.admit).
CREATE TABLE rate_counts (
    bucket TEXT PRIMARY KEY,
    in_window BIGINT NOT NULL,
    last_ms BIGINT NOT NULL
);

INSERT INTO rate_counts (bucket, in_window, last_ms)
    SELECT bucket, COUNT(*), MAX(at_ms) FROM rate_events GROUP BY bucket;
