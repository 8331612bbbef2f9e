-- Contracts in the rollup (issue 28). Portable SQL (SQLite and PostgreSQL).
--
-- cohort_months gains contracts (distinct contracts among the samples: the rows sharing
-- a contract_id are one, a row without one is a contract of its own) and bulk_contracts
-- (contracts of more than one row). The rows of one contract share every key of the
-- table (contract date included), so both are counted within a key. Like 0010, the
-- table is rebuilt from transactions (create, fill, drop, rename): the counts of each
-- key group its rows by contract first.
CREATE TABLE cohort_months_contracts (
    sigungu_code TEXT NOT NULL,
    dong TEXT NOT NULL,
    property_type TEXT NOT NULL,
    transaction_type TEXT NOT NULL,
    month TEXT NOT NULL,
    source TEXT NOT NULL,
    building_type TEXT NOT NULL,
    samples BIGINT NOT NULL,
    contracts BIGINT NOT NULL DEFAULT 0,
    bulk_contracts BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (
        sigungu_code, dong, property_type, transaction_type, month, source, building_type
    )
);
INSERT INTO cohort_months_contracts (
    sigungu_code, dong, property_type, transaction_type, month, source, building_type,
    samples, contracts, bulk_contracts
)
SELECT sigungu_code, '', property_type, transaction_type, month, source, building_type,
       SUM(n), COUNT(*), SUM(CASE WHEN n > 1 THEN 1 ELSE 0 END)
FROM (
    SELECT sigungu_code, property_type, transaction_type, month, source,
           COALESCE(building_type, '') AS building_type,
           COALESCE(contract_id, natural_key) AS contract, COUNT(*) AS n
    FROM transactions
    GROUP BY sigungu_code, property_type, transaction_type, month, source,
             COALESCE(building_type, ''), COALESCE(contract_id, natural_key)
) AS by_contract
GROUP BY sigungu_code, property_type, transaction_type, month, source, building_type;
INSERT INTO cohort_months_contracts (
    sigungu_code, dong, property_type, transaction_type, month, source, building_type,
    samples, contracts, bulk_contracts
)
SELECT sigungu_code, dong, property_type, transaction_type, month, source, building_type,
       SUM(n), COUNT(*), SUM(CASE WHEN n > 1 THEN 1 ELSE 0 END)
FROM (
    SELECT sigungu_code, dong, property_type, transaction_type, month, source,
           COALESCE(building_type, '') AS building_type,
           COALESCE(contract_id, natural_key) AS contract, COUNT(*) AS n
    FROM transactions
    WHERE dong IS NOT NULL AND dong <> ''
    GROUP BY sigungu_code, dong, property_type, transaction_type, month, source,
             COALESCE(building_type, ''), COALESCE(contract_id, natural_key)
) AS by_contract
GROUP BY sigungu_code, dong, property_type, transaction_type, month, source, building_type;
DROP TABLE cohort_months;
ALTER TABLE cohort_months_contracts RENAME TO cohort_months;
CREATE INDEX cohort_months_month ON cohort_months (month);

-- The stored coverage rows lack contract_count and bulk_contracts, and a period now
-- counts with 2 contracts: every district is made stale, so the next load rebuilds
-- them all and coverage is built from the rollup meanwhile.
DELETE FROM coverage_cohorts;
DELETE FROM coverage_districts;
