-- What was loaded (issue 28). Portable SQL (SQLite and PostgreSQL).
--
-- A district-month now counts as loaded only when source_months records a complete read
-- of it; one never recorded is not loaded (before, it counted as complete). Files
-- without paging figures (the RTMS web CSV export, svc's samples) and the demo set now
-- record a whole read of each month they hold (pages {"-1": records}, the page
-- svc_core.realestate.freshness.WHOLE_FILE), under the kind of the records' types: the
-- sync kind (svc_core.sync.rtms.COHORTS) or 'other' for commercial leases (OTHER_KIND).
--
-- Before, such loads recorded nothing, nor did RTMS API files loaded before migration
-- 0010. So every district-month that holds deals and has no record yet is recorded as
-- such a load would record it now, and an upgraded store keeps answering what it holds
-- as loaded. (The demo set also records its months without a deal of a kind: run
-- svc demo-data again to add those.)
INSERT INTO source_months (kind, sigungu_code, month, total_count, pages, complete, updated_at)
SELECT c.kind, c.sigungu_code, c.month, c.items,
       '{"-1": ' || CAST(c.items AS TEXT) || '}', 1,
       COALESCE((SELECT MAX(loaded_at) FROM ingest_log), 0)
FROM (
    SELECT CASE
               WHEN property_type = 'officetel' AND transaction_type = 'sale'
                   THEN 'officetel-trade'
               WHEN property_type = 'officetel' THEN 'officetel-rent'
               WHEN transaction_type = 'sale' THEN 'commercial'
               ELSE 'other'
           END AS kind,
           sigungu_code, month, CAST(SUM(samples) AS BIGINT) AS items
    FROM cohort_months
    WHERE dong = ''
    GROUP BY 1, 2, 3
) c
WHERE NOT EXISTS (
    SELECT 1 FROM source_months s
    WHERE s.kind = c.kind AND s.sigungu_code = c.sigungu_code AND s.month = c.month
);
