-- Names that tell the truth (issue 28, items 6 and 7). Portable SQL: runs unchanged on
-- SQLite (>= 3.35) and PostgreSQL (>= 13).

-- Samples per district, property type, month and building use as published (RTMS
-- buildingUse; '' when the source publishes none): what GET /dimensions lists as the
-- building uses behind each property type (mixed_use holds 기타, 숙박, 교육연구, ...).
-- A load rebuilds the rows of the districts whose records it changed, in its own
-- transaction, so dimensions never scan transactions.
CREATE TABLE use_months (
    sigungu_code TEXT NOT NULL,
    property_type TEXT NOT NULL,
    month TEXT NOT NULL,
    building_use TEXT NOT NULL,
    samples BIGINT NOT NULL,
    PRIMARY KEY (sigungu_code, property_type, month, building_use)
);
CREATE INDEX use_months_month ON use_months (month);
INSERT INTO use_months (sigungu_code, property_type, month, building_use, samples)
    SELECT sigungu_code, property_type, month, COALESCE(building_use, ''), COUNT(*)
    FROM transactions
    GROUP BY sigungu_code, property_type, month, COALESCE(building_use, '');

-- When the data of each district last changed (unix seconds), per dataset
-- ('transactions': records kept or excluded; 'indices': R-ONE index values): written by
-- the load that inserts, retracts or updates any of them, and only then, so reloading a
-- file that changes nothing moves no _meta.data_as_of. Districts stored before this
-- migration start at the latest load of their dataset (what data_as_of said until now).
CREATE TABLE data_changes (
    dataset TEXT NOT NULL,
    sigungu_code TEXT NOT NULL,
    changed_at BIGINT NOT NULL,
    PRIMARY KEY (dataset, sigungu_code)
);
INSERT INTO data_changes (dataset, sigungu_code, changed_at)
    SELECT 'transactions', d.sigungu_code, l.at
    FROM (SELECT DISTINCT sigungu_code FROM cohort_months) d,
        (SELECT MAX(loaded_at) AS at FROM ingest_log
         WHERE kind LIKE 'rtms-%' OR kind IN ('samples', 'demo')) l
    WHERE l.at IS NOT NULL;
INSERT INTO data_changes (dataset, sigungu_code, changed_at)
    SELECT 'indices', d.sigungu_code, l.at
    FROM (SELECT DISTINCT sigungu_code FROM index_observations) d,
        (SELECT MAX(loaded_at) AS at FROM ingest_log) l
    WHERE l.at IS NOT NULL;
