-- Real-estate coverage, precomputed at ingest. Portable SQL (SQLite and PostgreSQL).
--
-- One finished coverage row per cohort (district, or dong when dong <> ''), property
-- type, transaction type and granularity, rebuilt from cohort_months for every district
-- a load touches, in the load's transaction. GET /coverage without a district reads
-- the top rows of coverage_cohorts_rank and never scans the rollup or transactions.

CREATE TABLE coverage_cohorts (
    granularity TEXT NOT NULL,
    sigungu_code TEXT NOT NULL,
    dong TEXT NOT NULL,
    property_type TEXT NOT NULL,
    transaction_type TEXT NOT NULL,
    dong_level INTEGER NOT NULL,
    type_rank INTEGER NOT NULL,
    total_samples BIGINT NOT NULL,
    row_json TEXT NOT NULL,
    source_mix TEXT NOT NULL,
    PRIMARY KEY (granularity, sigungu_code, dong, property_type, transaction_type)
);
CREATE INDEX coverage_cohorts_rank
    ON coverage_cohorts (granularity, dong_level, total_samples);

-- Districts whose coverage rows are up to date (a district may have none: no period with
-- two samples). Districts in cohort_months but not here (data loaded before this
-- migration) are rebuilt by the next load and served from the rollup meanwhile.
CREATE TABLE coverage_districts (
    sigungu_code TEXT PRIMARY KEY
);
