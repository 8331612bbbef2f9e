"""The ``Store``: every query the services run, grouped by area, over its databases.

The public data (``migrate.DATA_TABLES``: what loads and syncs write) has a database of
its own, ``Store.data``. On PostgreSQL it is the same database: writers lock rows, so a
load never holds up a counted call's write. On SQLite every writer takes the file's one
write lock, and a large load holds it for seconds; so there the data lives in a file of
its own beside the accounts' (``sqlite_data_url``), and a load never holds the lock that
rate stamps, quota holds and sign-ins take. No transaction spans the two.
"""

from __future__ import annotations

from svc_server.store.accounts import AccountsRepo
from svc_server.store.base import Database
from svc_server.store.markets import MarketsRepo
from svc_server.store.migrate import (
    DATA_TABLES,
    account_statement,
    current_version,
    data_statement,
    every_statement,
)
from svc_server.store.migrate import migrate as migrate_schema
from svc_server.store.realestate import RealEstateRepo
from svc_server.store.request_log import RequestLogRepo
from svc_server.store.sqlite import move_tables
from svc_server.store.sync import SyncRepo
from svc_server.store.webhooks import WebhooksRepo


class Store:
    """The persistence facade handed to services; areas hang off it as attributes."""

    def __init__(self, db: Database, data: Database | None = None) -> None:
        self.db = db
        self.data = data if data is not None else db
        self.closed = False
        """True once ``close`` ran: background writers stop instead of retrying."""
        """The public data's database (real estate, markets, sync state)."""
        self.accounts = AccountsRepo(db)
        self.holds = self.accounts.holds
        self.webhooks = WebhooksRepo(db)
        self.request_log = RequestLogRepo(db)
        self.realestate = RealEstateRepo(self.data)
        self.markets = MarketsRepo(self.data)
        self.sync = SyncRepo(self.data)

    def migrate(self) -> list[str]:
        """Create or upgrade the schema; return the migrations applied.

        With a data file of its own, a SQLite file from before the split (its data
        tables still in it) is brought up to date whole, then its data moves over."""
        if self.data is self.db:
            return migrate_schema(self.db)
        whole = self.data_to_move()
        applied = migrate_schema(self.db, part=every_statement if whole else account_statement)
        # The main file now has every version, so the data file's names are among these
        # (or were applied before: a data file made for an older store is no migration).
        migrate_schema(self.data, part=data_statement)
        if whole:
            move_tables(self.db, self.data, sorted(DATA_TABLES))
        return applied

    def data_to_move(self) -> bool:
        """Whether the main file still holds the public data (a SQLite file from before
        the data file): ``migrate`` moves it."""
        return self.data is not self.db and not DATA_TABLES.isdisjoint(self.db.table_names())

    def schema_version(self) -> int:
        """The version both databases have reached."""
        version = current_version(self.db)
        if self.data is not self.db:
            version = min(version, current_version(self.data))
        return version

    def problem(self, *, probe: bool = False) -> str | None:
        """Why one of the store's databases cannot serve what it holds (``problem`` of
        each: a SQLite file damaged, gone or replaced); None when both can. ``probe``
        reads each file's schema first, so a damaged header is found before any call."""
        for db in (self.db, self.data) if self.data is not self.db else (self.db,):
            if probe and db.dialect == "sqlite":
                try:
                    with db.transaction(write=False) as tx:
                        tx.fetchone("SELECT 1 AS ok FROM sqlite_master LIMIT 1")
                except Exception:  # noqa: S110 - what it found is what problem() says
                    pass
            found = db.problem()
            if found is not None:
                return found
        return None

    def close(self) -> None:
        self.closed = True
        self.db.close()
        if self.data is not self.db:
            self.data.close()
