"""When the data behind an answer last changed (``data_changes``, migration 0018).

``_meta.data_as_of`` says when the data an answer is built from last *changed*, not
when a load last ran: reloading a file that holds nothing new must not move it. A load
knows which district-months it wrote into; what they hold is compared before and after
its writes by a digest of their records (kept and excluded, every column:
``store.change_records``), and only the districts whose content differs are stamped
with the load's time, per dataset (``transactions``, ``indices``). Answers read the latest
stamp of their districts (``svc_core.realestate.common.data_as_of``). Part of
``RealEstateRepo``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from svc_core.realestate.changes import ALL_TYPES, Types
from svc_server.store.base import IN_CHUNK, Database, Tx, marks

MonthPair = tuple[str, str]
"""(sigungu_code, ``YYYY-MM``)."""
DATASETS = ("transactions", "indices")


def by_district(pairs: Iterable[MonthPair]) -> dict[str, list[str]]:
    """District → its months (sorted), from district-month pairs."""
    out: dict[str, list[str]] = {}
    for code, month in sorted(set(pairs)):
        out.setdefault(code, []).append(month)
    return out


def month_parts(months: list[str]) -> Iterator[list[str]]:
    """``months`` ``IN_CHUNK`` at a time, so no statement carries an unbounded list."""
    for start in range(0, len(months), IN_CHUNK):
        yield months[start : start + IN_CHUNK]


def cohort_where(months: int, types: Types = ALL_TYPES) -> str:
    """``sigungu_code = ?`` and ``types`` and ``months`` months as ``IN`` lists, so the
    read walks the cohort index with equality on every column (as ``samples`` does);
    the parameters are ``cohort_params``."""
    ptypes, ttypes = types
    return (
        f"sigungu_code = ? AND property_type IN ({marks(len(ptypes))})"
        f" AND transaction_type IN ({marks(len(ttypes))})"
        f" AND month IN ({marks(months)})"
    )


def cohort_params(code: str, months: Iterable[str], types: Types = ALL_TYPES) -> tuple[str, ...]:
    return (code, *types[0], *types[1], *months)


class DataChanges:
    """Digests of district-months and the change stamps (mixed into ``RealEstateRepo``)."""

    db: Database

    def changes(self, tx: Tx) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]]]:
        """Dataset → district → when its data last changed (unix seconds), and dataset →
        district → its data version (the latest change id behind it), in one read."""
        stamps: dict[str, dict[str, int]] = {name: {} for name in DATASETS}
        versions: dict[str, dict[str, int]] = {name: {} for name in DATASETS}
        rows = tx.fetchall("SELECT dataset, sigungu_code, changed_at, version FROM data_changes")
        for row in rows:
            dataset, code = str(row["dataset"]), str(row["sigungu_code"])
            stamps.setdefault(dataset, {})[code] = int(row["changed_at"])
            versions.setdefault(dataset, {})[code] = int(row["version"])
        return stamps, versions


class DataChangeWrites:
    """The writes of when each district's data last changed: only the one write path reaches
    them (``store.loading``)."""

    db: Database

    def record_changes(
        self, tx: Tx, dataset: str, versions: Mapping[str, int], *, now: float
    ) -> None:
        """Stamp each district of ``versions`` as changed at ``now`` in ``dataset``, with
        its data version (the latest change id behind it); neither moves back, should the
        clock or a concurrent writer."""
        if dataset not in DATASETS:
            raise ValueError(f"unknown dataset {dataset!r}")
        rows = [(dataset, code, int(now), v) for code, v in sorted(versions.items())]
        if rows:
            tx.executemany(
                "INSERT INTO data_changes (dataset, sigungu_code, changed_at, version) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (dataset, sigungu_code) DO UPDATE SET "
                "changed_at = CASE WHEN excluded.changed_at > data_changes.changed_at "
                "THEN excluded.changed_at ELSE data_changes.changed_at END, "
                "version = CASE WHEN excluded.version > data_changes.version "
                "THEN excluded.version ELSE data_changes.version END",
                rows,
            )
