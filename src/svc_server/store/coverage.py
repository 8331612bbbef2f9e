"""The precomputed coverage rows (``coverage_cohorts``, ``coverage_districts``): part of
``RealEstateRepo``, kept in its own module."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from svc_core.realestate.coverage import CoverageCohort, CoverageRow, coverage_row, stored_form
from svc_server.store.base import (
    IN_CHUNK,
    WRITE_CHUNK,
    Database,
    Tx,
    chunks,
    equal_filters,
    marks,
)


class CoverageTables:
    """Reads and writes of the precomputed coverage tables."""

    db: Database

    def stale_coverage_districts(self, tx: Tx) -> set[str]:
        """Districts with rollup rows whose coverage was never computed (data loaded
        before the coverage table existed)."""
        # The districts of the rollup by one index seek each (a skip scan), not a scan.
        rows = tx.fetchall(
            "WITH RECURSIVE d(code) AS ("
            "SELECT MIN(sigungu_code) FROM cohort_months UNION ALL "
            "SELECT (SELECT MIN(sigungu_code) FROM cohort_months WHERE sigungu_code > d.code) "
            "FROM d WHERE d.code IS NOT NULL) "
            "SELECT code FROM d WHERE code IS NOT NULL AND code NOT IN "
            "(SELECT sigungu_code FROM coverage_districts)"
        )
        return {r["code"] for r in rows}

    def coverage(
        self,
        *,
        granularity: str,
        dong_level: bool,
        limit: int,
        property_type: str | None = None,
        transaction_type: str | None = None,
        dong: str | None = None,
        building_type: str | None = None,
    ) -> list[tuple[CoverageRow, Mapping[str, int]]]:
        """The top ``limit`` precomputed coverage rows of one building type (None: the
        combined rows), by ``total_samples`` descending (then district, dong and type
        order), with each row's per-source samples."""
        sql = (
            "SELECT row_json, source_mix FROM coverage_cohorts "
            "WHERE granularity = ? AND building_type = ? AND dong_level = ?"
        )
        where, equal = equal_filters(
            property_type=property_type, transaction_type=transaction_type, dong=dong
        )
        sql += where + " ORDER BY total_samples DESC, sigungu_code, dong, type_rank LIMIT ?"
        params: list[Any] = [granularity, building_type or "", int(dong_level), *equal, limit]
        with self.db.transaction(write=False) as tx:
            rows = tx.fetchall(sql, params)
        return [(coverage_row(r["row_json"]), json.loads(r["source_mix"])) for r in rows]


class CoverageWrites:
    """The writes of the precomputed coverage: only the one write path reaches
    them (``store.loading``)."""

    db: Database

    def mark_coverage_stale(self, tx: Tx, codes: Sequence[str]) -> None:
        """Leave the coverage rows of districts ``codes`` to be rebuilt later
        (``ingest.coverage.refresh_stale``): until then they count as never computed and
        coverage is built from the rollup (``stale_coverage_districts``)."""
        for part in chunks(codes, IN_CHUNK):
            tx.execute(
                f"DELETE FROM coverage_districts WHERE sigungu_code IN ({marks(len(part))})",
                tuple(part),
            )

    def replace_coverage(
        self, tx: Tx, codes: Sequence[str], rows: Sequence[CoverageCohort]
    ) -> None:
        """Replace every coverage row of the districts ``codes`` by ``rows`` and mark the
        districts up to date."""
        tx.executemany(
            "INSERT INTO coverage_districts (sigungu_code) VALUES (?) ON CONFLICT DO NOTHING",
            [(code,) for code in codes],
        )
        for part in chunks(codes, IN_CHUNK):
            tx.execute(
                f"DELETE FROM coverage_cohorts WHERE sigungu_code IN ({marks(len(part))})",
                tuple(part),
            )
        values = [
            (
                r.granularity,
                r.sigungu_code,
                r.dong,
                r.property_type,
                r.transaction_type,
                r.building_type,
                int(r.dong != ""),
                r.type_rank,
                r.total_samples,
                stored_form(r.row),
                json.dumps(r.source_mix, separators=(",", ":")),
            )
            for r in rows
        ]
        for batch in chunks(values, WRITE_CHUNK):
            tx.executemany(
                "INSERT INTO coverage_cohorts (granularity, sigungu_code, dong, property_type, "
                "transaction_type, building_type, dong_level, type_rank, total_samples, "
                "row_json, source_mix) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                batch,
            )
