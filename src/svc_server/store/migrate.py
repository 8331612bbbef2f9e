"""Versioned schema migrations, applied in order by ``svc init`` (idempotent).

Each ``migrations/NNNN_name.sql`` file is portable SQL. The applied versions are recorded
in ``schema_version``; running ``migrate`` again applies only what is new, under a lock so
two processes starting together do not race.

A SQLite deployment keeps the public data (``DATA_TABLES``) in a file of its own beside
the accounts' (``svc_server.store.open_store``): each statement is applied to the file
holding the table it names (``data_statement``), and each file records the versions.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from importlib import resources

import attrs

from svc_server.store.base import Database

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
_TABLE = re.compile(
    r"^(?:CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?\w+\s+ON"
    r"|CREATE\s+TABLE(?:\s+IF\s+NOT\s+EXISTS)?|ALTER\s+TABLE|DROP\s+TABLE(?:\s+IF\s+EXISTS)?"
    r"|INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)",
    re.IGNORECASE,
)
DATA_TABLES = frozenset(
    {
        "transactions",
        "excluded_transactions",
        "rejected_records",
        "cohort_months",
        "coverage_cohorts",
        "coverage_districts",
        "source_months",
        "sync_months",
        "sync_tables",
        "index_observations",
        "ingest_log",
        "market_listings",
        "market_activity",
        "market_rows",
        "market_dimensions",
        "use_months",
        "data_changes",
        "change_records",
        "latest_reads",
        "exclusion_counts",
    }
)
"""The public data's tables: what loads and syncs write, and nothing an account owns.
In SQLite they live in a file of their own, so a load holding that file's write lock
for seconds never holds up the writes a counted call makes (rate stamps, quota holds)."""
_DATA_WHILE_MIGRATING = frozenset({"cohort_months_typed", "cohort_months_contracts"})
"""Tables 0010 and 0019 fill and rename to cohort_months."""


@attrs.frozen(kw_only=True)
class Migration:
    version: int
    name: str
    sql: str


def available() -> list[Migration]:
    """Every bundled migration, in version order."""
    folder = resources.files("svc_server.store") / "migrations"
    found = []
    for entry in folder.iterdir():
        match = _NAME.match(entry.name)
        if match:
            found.append(
                Migration(
                    version=int(match.group(1)), name=entry.name, sql=entry.read_text("utf-8")
                )
            )
    return sorted(found, key=lambda m: m.version)


def statements(sql: str) -> list[str]:
    """Split a migration into statements (our SQL has no ``;`` inside literals)."""
    lines = [line for line in sql.splitlines() if not line.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def statement_table(statement: str) -> str:
    """The table a migration statement creates, changes or fills; ``ValueError`` for a
    statement of another form (teach ``_TABLE`` the form before using it)."""
    match = _TABLE.match(statement.strip())
    if match is None:
        raise ValueError(f"a migration statement names no table: {statement[:60]!r}")
    return match.group(1).lower()


def data_statement(statement: str) -> bool:
    """Whether ``statement`` belongs to the data file (it names one of ``DATA_TABLES``)."""
    table = statement_table(statement)
    return table in DATA_TABLES or table in _DATA_WHILE_MIGRATING


def account_statement(statement: str) -> bool:
    """Whether ``statement`` belongs to the accounts' file."""
    return not data_statement(statement)


def every_statement(statement: str) -> bool:
    """One database holds every table (PostgreSQL, or a SQLite file from before the split)."""
    return True


def current_version(db: Database) -> int:
    """The highest applied version, 0 for an empty database."""
    if "schema_version" not in db.table_names():
        return 0
    with db.transaction(write=False) as tx:
        row = tx.fetchone("SELECT MAX(version) AS v FROM schema_version")
    return int(row["v"] or 0) if row else 0


def migrate(
    db: Database,
    *,
    now: float | None = None,
    part: Callable[[str], bool] = every_statement,
) -> list[str]:
    """Apply pending migrations' statements for which ``part`` holds; return the names
    applied (empty when up to date)."""
    applied: list[str] = []
    with db.transaction() as tx:
        db.lock(tx, "svc:migrate")
        tx.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            "version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)"
        )
        done = {int(r["version"]) for r in tx.fetchall("SELECT version FROM schema_version")}
        for migration in available():
            if migration.version in done:
                continue
            for statement in statements(migration.sql):
                if part(statement):
                    tx.execute(statement)
            tx.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, int(now if now is not None else time.time())),
            )
            applied.append(migration.name)
    return applied
