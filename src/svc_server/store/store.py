"""The ``Store``: every query the services run, grouped by area, over one ``Database``."""

from __future__ import annotations

import time

from svc_server.store import migrate
from svc_server.store.accounts import AccountsRepo
from svc_server.store.base import Database
from svc_server.store.markets import MarketsRepo
from svc_server.store.realestate import RealEstateRepo
from svc_server.store.sync import SyncRepo
from svc_server.store.webhooks import WebhooksRepo


class Store:
    """The persistence facade handed to services; areas hang off it as attributes."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.accounts = AccountsRepo(db)
        self.holds = self.accounts.holds
        self.webhooks = WebhooksRepo(db)
        self.realestate = RealEstateRepo(db)
        self.markets = MarketsRepo(db)
        self.sync = SyncRepo(db)

    def migrate(self) -> list[str]:
        """Create or upgrade the schema; return the migrations applied."""
        return migrate.migrate(self.db)

    def schema_version(self) -> int:
        return migrate.current_version(self.db)

    def ping(self) -> float:
        """Round-trip a trivial query; return its latency in milliseconds."""
        start = time.perf_counter()
        with self.db.transaction(write=False) as tx:
            tx.fetchone("SELECT 1 AS ok")
        return (time.perf_counter() - start) * 1000

    def close(self) -> None:
        self.db.close()
