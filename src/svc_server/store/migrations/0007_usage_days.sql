-- Successful counted calls per consumer, UTC day (YYYY-MM-DD) and key mode: the
-- dashboard's calls per day. A day is taken in the transaction that reserves the quota
-- unit (AccountsRepo.admit) and given back in the one that refunds it, so the days of a
-- month add up to its usage_counters row. Calls counted before this migration have no
-- day: they stay in the month's count only.
CREATE TABLE usage_days (
    consumer_id TEXT NOT NULL,
    day TEXT NOT NULL,
    mode TEXT NOT NULL,
    count BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (consumer_id, day, mode)
);
