"""Versioned schema migrations, applied in order by ``svc init`` (idempotent).

Each ``migrations/NNNN_name.sql`` file is portable SQL. The applied versions are recorded
in ``schema_version``; running ``migrate`` again applies only what is new, under a lock so
two processes starting together do not race.
"""

from __future__ import annotations

import re
import time
from importlib import resources

import attrs

from svc_server.store.base import Database

_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")


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


def current_version(db: Database) -> int:
    """The highest applied version, 0 for an empty database."""
    if "schema_version" not in db.table_names():
        return 0
    with db.transaction(write=False) as tx:
        row = tx.fetchone("SELECT MAX(version) AS v FROM schema_version")
    return int(row["v"] or 0) if row else 0


def migrate(db: Database, *, now: float | None = None) -> list[str]:
    """Apply pending migrations; return the names applied (empty when up to date)."""
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
                tx.execute(statement)
            tx.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, int(now if now is not None else time.time())),
            )
            applied.append(migration.name)
    return applied
