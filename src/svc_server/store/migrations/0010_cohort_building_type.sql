-- Building type in the rollups, and what the store holds of each district-month (issue
-- 14). Portable SQL (SQLite and PostgreSQL).
--
-- cohort_months gains building_type in its key ('whole_building', 'unit', or '' when the
-- source does not say). SQLite cannot alter a primary key, so the table is rebuilt from
-- transactions (whose counts it holds anyway): create, fill, drop, rename.
CREATE TABLE cohort_months_typed (
    sigungu_code TEXT NOT NULL,
    dong TEXT NOT NULL,
    property_type TEXT NOT NULL,
    transaction_type TEXT NOT NULL,
    month TEXT NOT NULL,
    source TEXT NOT NULL,
    building_type TEXT NOT NULL,
    samples BIGINT NOT NULL,
    PRIMARY KEY (
        sigungu_code, dong, property_type, transaction_type, month, source, building_type
    )
);
INSERT INTO cohort_months_typed (
    sigungu_code, dong, property_type, transaction_type, month, source, building_type, samples
)
SELECT sigungu_code, '', property_type, transaction_type, month, source,
       COALESCE(building_type, ''), COUNT(*)
FROM transactions
GROUP BY sigungu_code, property_type, transaction_type, month, source,
         COALESCE(building_type, '');
INSERT INTO cohort_months_typed (
    sigungu_code, dong, property_type, transaction_type, month, source, building_type, samples
)
SELECT sigungu_code, dong, property_type, transaction_type, month, source,
       COALESCE(building_type, ''), COUNT(*)
FROM transactions
WHERE dong IS NOT NULL AND dong <> ''
GROUP BY sigungu_code, dong, property_type, transaction_type, month, source,
         COALESCE(building_type, '');
DROP TABLE cohort_months;
ALTER TABLE cohort_months_typed RENAME TO cohort_months;
CREATE INDEX cohort_months_month ON cohort_months (month);

-- coverage_cohorts keeps one row per building type too ('' the combined row of every
-- deal). The stored rows lack the new fields, so every district is made stale: the next
-- load rebuilds them all, and coverage is built from the rollup meanwhile.
DROP TABLE coverage_cohorts;
CREATE TABLE coverage_cohorts (
    granularity TEXT NOT NULL,
    sigungu_code TEXT NOT NULL,
    dong TEXT NOT NULL,
    property_type TEXT NOT NULL,
    transaction_type TEXT NOT NULL,
    building_type TEXT NOT NULL,
    dong_level INTEGER NOT NULL,
    type_rank INTEGER NOT NULL,
    total_samples BIGINT NOT NULL,
    row_json TEXT NOT NULL,
    source_mix TEXT NOT NULL,
    PRIMARY KEY (
        granularity, sigungu_code, dong, property_type, transaction_type, building_type
    )
);
CREATE INDEX coverage_cohorts_rank
    ON coverage_cohorts (granularity, building_type, dong_level, total_samples);
DELETE FROM coverage_districts;

-- What the store holds of each RTMS (sync kind, district, month) loaded with paging
-- figures (svc_core.realestate.freshness.MonthRead): the latest totalCount, the items of
-- each page loaded under it as JSON {page_no: items} (page 0: a whole read by svc sync
-- rtms) and whether they hold every item. A month never recorded counts as complete.
CREATE TABLE source_months (
    kind TEXT NOT NULL,
    sigungu_code TEXT NOT NULL,
    month TEXT NOT NULL,
    total_count BIGINT,
    pages TEXT NOT NULL,
    complete INTEGER NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (kind, sigungu_code, month)
);
CREATE INDEX source_months_incomplete ON source_months (complete);
-- The sync's own record: a complete month is a whole read, a partial or failed one is
-- incomplete. Files loaded before this migration left no paging record.
INSERT INTO source_months (kind, sigungu_code, month, total_count, pages, complete, updated_at)
SELECT kind, sigungu_code, month, total_count,
       '{"0": ' || CAST(total_count AS TEXT) || '}', 1, attempted_at
FROM sync_months WHERE status = 'complete' AND total_count IS NOT NULL;
INSERT INTO source_months (kind, sigungu_code, month, total_count, pages, complete, updated_at)
SELECT kind, sigungu_code, month, total_count, '{}', 0, attempted_at
FROM sync_months WHERE status <> 'complete';
