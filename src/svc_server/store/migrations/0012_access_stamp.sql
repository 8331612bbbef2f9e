-- The access stamp (issue 17): one counter that moves on every write that can change
-- what an API key admits (a key inserted, revoked, rotated, expired or given a new IP
-- allowlist; a consumer's plan, limits or status changed). Each server process keeps
-- the keys it has resolved in memory and trusts them while the stamp it last read (at
-- most KEY_STAMP_TTL seconds ago) is unchanged, so a change made by any process or host
-- is seen everywhere within that bound. Portable SQL.

CREATE TABLE access_stamp (
    id INTEGER PRIMARY KEY,
    version BIGINT NOT NULL
);
INSERT INTO access_stamp (id, version) VALUES (1, 0);
