-- The dashboard (issue 25): switching between the accounts a person belongs to, and
-- viewing and resending past webhook deliveries.
-- Portable SQL: runs unchanged on SQLite (>= 3.35) and PostgreSQL (>= 13).

-- The account a person chose to act on (POST /api/auth/me/accounts/{id}/switch). Read
-- only together with their active memberships: an account they no longer belong to is
-- never used, whatever this column says.
ALTER TABLE users ADD COLUMN current_consumer_id TEXT;

-- deliveries gains the receiver's reply (response_excerpt, for every attempt, not only
-- failed ones) and resend_of (the delivery a resend repeats). A resend carries the same
-- event id, so the one-delivery-per-(endpoint, event) rule becomes a unique index that
-- holds for every row but resends. SQLite cannot drop a table constraint: the table is
-- rebuilt, with its rows and indexes.
CREATE TABLE deliveries_v15 (
    id TEXT PRIMARY KEY,
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id),
    event_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    status TEXT NOT NULL,
    trigger TEXT NOT NULL DEFAULT 'scheduled',
    http_status BIGINT,
    duration_ms BIGINT,
    error_message TEXT,
    attempt_count BIGINT NOT NULL DEFAULT 0,
    claimed_by TEXT,
    claimed_at BIGINT,
    created_at BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    sent_at BIGINT,
    response_excerpt TEXT,
    resend_of TEXT
);
INSERT INTO deliveries_v15 (id, endpoint_id, event_id, event_type, status, trigger,
    http_status, duration_ms, error_message, attempt_count, claimed_by, claimed_at,
    created_at, seq, sent_at)
    SELECT id, endpoint_id, event_id, event_type, status, trigger, http_status,
    duration_ms, error_message, attempt_count, claimed_by, claimed_at, created_at, seq,
    sent_at FROM deliveries;
DROP TABLE deliveries;
ALTER TABLE deliveries_v15 RENAME TO deliveries;
CREATE UNIQUE INDEX deliveries_once ON deliveries (endpoint_id, event_id) WHERE resend_of IS NULL;
CREATE INDEX deliveries_pending ON deliveries (status, seq);
CREATE INDEX deliveries_endpoint ON deliveries (endpoint_id, created_at);
CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status, seq);
