-- Leases (issue 17): a server process reserves a block of rate-limit slots or quota
-- units in one write and admits calls from it in memory (svc_server.services.leases).
-- A quota lease is one usage_holds row holding `units` units (a call's own hold has 1);
-- a rate lease is one rate_events stamp counting `units` slots, named by `lease_id` so
-- the slots it did not use can be given back. Counts of both are sums of `units`.
-- Servers older than this migration count rows: upgrade every server of a database
-- together.
ALTER TABLE usage_holds ADD COLUMN units BIGINT NOT NULL DEFAULT 1;
ALTER TABLE rate_events ADD COLUMN units BIGINT NOT NULL DEFAULT 1;
ALTER TABLE rate_events ADD COLUMN lease_id TEXT;
