-- The state of `svc sync rtms` per (kind, sigungu, month). Portable SQL.
--
-- status: what the store holds for the month: 'complete' (every item of total_count read
-- and written in one transaction), 'partial' (read incompletely; nothing written) or
-- 'failed' (not read). A later incomplete read never turns 'complete' back: it shows in
-- attempt / attempted_at / detail. fetched_at, total_count, pages and digest describe
-- the complete read the store holds (or the latest attempt when none is complete).

CREATE TABLE sync_months (
    kind TEXT NOT NULL,
    sigungu_code TEXT NOT NULL,
    month TEXT NOT NULL,
    status TEXT NOT NULL,
    fetched_at BIGINT,
    total_count BIGINT,
    pages BIGINT NOT NULL,
    digest TEXT,
    attempt TEXT NOT NULL,
    attempted_at BIGINT NOT NULL,
    detail TEXT NOT NULL,
    PRIMARY KEY (kind, sigungu_code, month)
);

-- The state of `svc sync rone` per R-ONE statistic table and market-area era (the survey
-- redrew its areas in 2024 Q3: the eras are two series, loaded and recorded apart).
CREATE TABLE sync_tables (
    table_id TEXT NOT NULL,
    era TEXT NOT NULL,
    table_name TEXT NOT NULL,
    status TEXT NOT NULL,
    fetched_at BIGINT,
    total_count BIGINT,
    pages BIGINT NOT NULL,
    loaded BIGINT NOT NULL,
    detail TEXT NOT NULL,
    PRIMARY KEY (table_id, era)
);
