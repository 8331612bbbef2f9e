-- Webhooks: what the relay keeps of a consumer's subscription, and the outbox index.
-- Portable SQL: runs unchanged on SQLite (>= 3.35) and PostgreSQL (>= 13).

-- The payment processor's subscription id and period end, set by relay_subscription and
-- used by subscription.trial_will_end (never shown in account responses).
ALTER TABLE consumers ADD COLUMN subscription_id TEXT;
ALTER TABLE consumers ADD COLUMN subscription_period_end BIGINT;

-- The worker claims the oldest pending delivery of each endpoint.
CREATE INDEX deliveries_endpoint_status ON deliveries (endpoint_id, status, seq);
