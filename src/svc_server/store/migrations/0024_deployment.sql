-- What a deployment says about itself, recorded by `svc serve` at start and read by every
-- command and worker (issue 42): name public_url, the base of the links the API writes
-- (SVC_PUBLIC_URL, or the address served when it is not set), and listen_host, the
-- address the server listens on. A load command or worker publishing data.updated events
-- links them to the address the server serves /changes at, not to its own default.
-- Portable SQL (SQLite and PostgreSQL).
CREATE TABLE deployment (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    recorded_at BIGINT NOT NULL
);
