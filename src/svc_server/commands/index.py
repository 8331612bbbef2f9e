"""The ``svc`` commands: each one's name, the module that defines it and its one-line
summary, in the order ``svc --help`` lists them.

Standard library only, and imported alone: ``svc --help`` and ``svc --version`` list
and answer from here and import no command module (those pull in the server: stores,
the app, delivery), so they answer at once. The modules' ``register`` take their
summaries from ``SUMMARY``."""

from __future__ import annotations

COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("init", "core", "create or upgrade the database schema (idempotent)"),
    ("serve", "core", "run the HTTP server (granian, or gunicorn with --server gunicorn)"),
    ("ingest", "data", "load source files (MOLIT RTMS, R-ONE, samples CSV, marketplace CSV)"),
    ("demo-data", "data", "load the synthetic demo data set"),
    ("sync", "sync", "fetch MOLIT RTMS data from the official API into the store (docs/sync.md)"),
    ("consumer", "accounts", "create, list and change consumers"),
    ("key", "accounts", "create, list and revoke API keys as an operator"),
    ("worker", "webhooks", "deliver webhooks and run periodic jobs"),
    ("webhook", "webhooks", "list webhook endpoints and deliveries as an operator"),
    ("subscription", "webhooks", "relay payment-processor changes"),
    ("export", "export", "write the loaded deals and pulse rollups to Parquet (svc[parquet])"),
    ("openapi", "openapi", "print the OpenAPI document, or write the API reference pages"),
    ("mcp", "mcp", "serve svc's tools to an AI assistant over stdio (MCP)"),
)
SUMMARY = {name: summary for name, _, summary in COMMANDS}
MODULES = tuple(dict.fromkeys(module for _, module, _ in COMMANDS))
"""The command modules, in the order they register."""
