-- The deals behind a figure (issue 14, GET /api/v1/real-estate/transactions). Portable SQL.
--
-- Each transaction keeps what the source publishes about it and the load that stored it:
-- building_use (용도), floor, build_year, jibun (as published: a masked 1** stays masked)
-- and load_id (the ingest_log row of the load that stored it). None of them enters
-- natural_key, so stored keys stay valid. Rows stored before this migration keep NULLs
-- until their file is loaded again (`svc load` / `svc sync rtms` fill the columns of the
-- records they find already stored).
--
-- excluded_transactions holds the records a load excluded by rule (cancelled deals,
-- partial shares, ...) with their reason and load: what ingest_log.excluded counts. They
-- never enter transactions, the rollup or any aggregate. Loads before this migration
-- stored none: their exclusions are only counted until the file is loaded again.

ALTER TABLE transactions ADD COLUMN building_use TEXT;
ALTER TABLE transactions ADD COLUMN floor BIGINT;
ALTER TABLE transactions ADD COLUMN build_year BIGINT;
ALTER TABLE transactions ADD COLUMN jibun TEXT;
ALTER TABLE transactions ADD COLUMN load_id TEXT;
CREATE INDEX transactions_listing ON transactions (sigungu_code, deal_date, natural_key);

CREATE TABLE excluded_transactions (
    natural_key TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    load_id TEXT NOT NULL,
    source TEXT NOT NULL,
    sigungu_code TEXT NOT NULL,
    sigungu TEXT NOT NULL,
    dong TEXT,
    property_type TEXT NOT NULL,
    transaction_type TEXT NOT NULL,
    deal_date TEXT NOT NULL,
    month TEXT NOT NULL,
    price_krw BIGINT NOT NULL,
    monthly_rent_krw BIGINT,
    area_m2 DOUBLE PRECISION,
    synthetic INTEGER NOT NULL DEFAULT 0,
    building_type TEXT,
    land_area_m2 DOUBLE PRECISION,
    building_use TEXT,
    floor BIGINT,
    build_year BIGINT,
    jibun TEXT
);
CREATE INDEX excluded_transactions_listing
    ON excluded_transactions (sigungu_code, deal_date, natural_key);
