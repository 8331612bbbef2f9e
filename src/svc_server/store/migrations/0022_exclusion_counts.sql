-- The exclusions every answer states (``_meta.exclusions``) kept as loads write them, so
-- reading them costs the same at 7,680 loads as at 7. Portable SQL (SQLite and
-- PostgreSQL).
--
-- latest_reads: the latest read of each RTMS file (or sync month) by its digest, the one
-- whose exclusions count (latest load time, then smallest id, as the log was read).
-- exclusion_counts: how many of those latest reads hold each exclusions text (the JSON
-- of reason to count); the stated totals are their sum.
CREATE TABLE latest_reads (
    sha256 TEXT PRIMARY KEY,
    id TEXT NOT NULL,
    loaded_at BIGINT NOT NULL,
    excluded TEXT NOT NULL
);
INSERT INTO latest_reads (sha256, id, loaded_at, excluded)
    SELECT sha256, id, loaded_at, excluded FROM (
        SELECT sha256, id, loaded_at, excluded, ROW_NUMBER() OVER (
            PARTITION BY sha256 ORDER BY loaded_at DESC, id
        ) AS r FROM ingest_log WHERE kind LIKE 'rtms-%'
    ) AS ranked WHERE r = 1;
CREATE TABLE exclusion_counts (
    excluded TEXT PRIMARY KEY,
    reads BIGINT NOT NULL
);
INSERT INTO exclusion_counts (excluded, reads)
    SELECT excluded, COUNT(*) FROM latest_reads GROUP BY excluded;
