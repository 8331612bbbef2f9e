-- Quota holds: one row per counted call in flight with a quota (issue 15, item 8).
-- usage_counters now counts settled successful calls only: admission takes a hold
-- while settled + live holds < quota (HoldsRepo.take_hold, under the account's
-- quota lock), a success turns its hold into a settled unit and its day, a failure
-- deletes it. A hold past expires_at (unix seconds) belongs to a process that died
-- before settling: admission ignores it and deletes it. Servers older than this
-- migration do not see holds: upgrade every server of a database together.
CREATE TABLE usage_holds (
    id TEXT PRIMARY KEY,
    consumer_id TEXT NOT NULL,
    month TEXT NOT NULL,
    mode TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX usage_holds_account ON usage_holds (consumer_id, mode, expires_at);
