-- What changed in the data (issue 31). Portable SQL (SQLite >= 3.35 and PostgreSQL >= 13).

-- One row per commit of public data that changed what a (source kind, district, month)
-- holds (store.change_records). ids are given by the writer under a lock held until
-- its commit, so they are committed in order and a reader paging by id never skips one
-- committed later with a smaller id. property_types and transaction_types are the types
-- the change touched, comma-separated and wrapped in commas (',office,shop,') so a
-- filter is one LIKE. Counts are of kept deals; the digests cover kept and excluded
-- records. complete: 1 when the month is now recorded as read whole.
CREATE TABLE change_records (
    id BIGINT PRIMARY KEY,
    changed_at BIGINT NOT NULL,
    load_id TEXT NOT NULL,
    load_kind TEXT NOT NULL,
    source_kind TEXT NOT NULL,
    sigungu_code TEXT NOT NULL,
    month TEXT NOT NULL,
    property_types TEXT NOT NULL,
    transaction_types TEXT NOT NULL,
    added BIGINT NOT NULL,
    retracted BIGINT NOT NULL,
    changed BIGINT NOT NULL,
    digest_before TEXT NOT NULL,
    digest_after TEXT NOT NULL,
    complete BIGINT NOT NULL
);
CREATE INDEX change_records_changed_at ON change_records (changed_at, id);
CREATE INDEX change_records_district ON change_records (sigungu_code, id);

-- The data version of each district per dataset: the id of the latest change behind
-- it (_meta.data_version), from the same sequence as change_records.id (index loads
-- take a number of it too). Districts stored before this migration start at 0.
ALTER TABLE data_changes ADD COLUMN version BIGINT NOT NULL DEFAULT 0;

-- data.updated filters of a webhook endpoint: JSON {"sigungu_codes": [...],
-- "property_types": [...], "transaction_types": [...]}, each list absent or empty for
-- "any" (svc_core.webhooks.events.validate_filters).
ALTER TABLE webhook_endpoints ADD COLUMN filters TEXT NOT NULL DEFAULT '{}';

-- How far data.updated events were published: the last change record turned into
-- events (services.data_events), in the accounts' database beside the event log.
CREATE TABLE change_publishing (
    name TEXT PRIMARY KEY,
    last_change BIGINT NOT NULL
);
