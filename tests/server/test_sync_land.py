"""``svc sync rtms --kinds industrial,land``: factory/warehouse and land sales through the
real ``svc`` command, against the stand-in serving the real land samples and the
constructed factory/warehouse month in live pages (``rtms_standin``). Expected counts
come from the files, read here with regular expressions, not from svc's readers."""

from __future__ import annotations

import re
from pathlib import Path

from tests.server.rtms_standin import SERVICES, StandIn
from tests.server.test_sync import rows, states, svc, sync

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LAND = {m: FIXTURES / "molit" / f"LAND_41830_{m}.xml" for m in ("202408", "202409")}
INDU = FIXTURES / "molit_constructed" / "INDU_41830_202408.xml"
MONTHS = ("--sigungu", "41830", "--from", "2024-08", "--to", "2024-09", "--page-size", "100")
ITEM = re.compile(r"<item>(.*?)</item>", re.S)


def kept(path: Path) -> int:
    """Items neither cancelled nor a partial share."""
    items = ITEM.findall(path.read_text(encoding="utf-8"))
    return sum(
        "<cdealType>O</cdealType>" not in i and "<shareDealingType>지분</shareDealingType>" not in i
        for i in items
    )


def total(path: Path) -> int:
    return len(ITEM.findall(path.read_text(encoding="utf-8")))


def test_both_services_load_every_month_whole_and_a_rerun_changes_nothing(
    db_url: str, standin: StandIn
) -> None:
    done = sync(db_url, standin, *MONTHS, "--kinds", "industrial,land")
    assert done.returncode == 0, done.stderr
    land_calls = [c for c in standin.calls if c["path"] == "/" + SERVICES["LAND"]]
    indu_calls = [c for c in standin.calls if c["path"] == "/" + SERVICES["INDU"]]
    pages = {m: -(-total(p) // 100) for m, p in LAND.items()}  # 526 and 510 items: 6 pages
    assert sorted((c["DEAL_YMD"], c["pageNo"]) for c in land_calls) == sorted(
        (m, str(n)) for m, count in pages.items() for n in range(1, count + 1)
    )
    assert sorted(c["DEAL_YMD"] for c in indu_calls) == ["202408", "202409"]
    assert {c["path"] for c in standin.calls} == {
        "/" + SERVICES["LAND"],
        "/" + SERVICES["INDU"],
    }
    found = states(db_url)
    assert {k: (s["status"], s["total_count"]) for k, s in found.items()} == {
        ("land", "2024-08"): ("complete", total(LAND["202408"])),
        ("land", "2024-09"): ("complete", total(LAND["202409"])),
        ("industrial", "2024-08"): ("complete", total(INDU)),
        ("industrial", "2024-09"): ("complete", 0),
    }
    counts = rows(
        db_url,
        "SELECT property_type, month, COUNT(*) AS n FROM transactions "
        "GROUP BY property_type, month ORDER BY property_type, month",
    )
    assert counts == [
        {"property_type": "industrial", "month": "2024-08", "n": kept(INDU)},
        {"property_type": "land", "month": "2024-08", "n": kept(LAND["202408"])},
        {"property_type": "land", "month": "2024-09", "n": kept(LAND["202409"])},
    ]
    keys = {r["natural_key"] for r in rows(db_url, "SELECT natural_key FROM transactions")}
    changes = rows(db_url, "SELECT COUNT(*) AS n FROM change_records")

    again = sync(db_url, standin, *MONTHS, "--kinds", "industrial,land")
    assert again.returncode == 0, again.stderr
    assert "rows: 0 added, 0 retracted (0 changes)" in again.stdout
    assert {r["natural_key"] for r in rows(db_url, "SELECT natural_key FROM transactions")} == keys
    assert rows(db_url, "SELECT COUNT(*) AS n FROM change_records") == changes


def test_a_synced_land_month_holds_what_ingesting_its_file_holds(
    db_url: str, standin: StandIn, tmp_path: Path
) -> None:
    """Paged reads of a month keep the keys (and the ordinals of identical items) that
    the whole file gives."""
    done = sync(db_url, standin, *MONTHS, "--kinds", "land")
    assert done.returncode == 0, done.stderr
    other = f"sqlite:///{tmp_path / 'ingested.db'}"
    loaded = svc(other, standin, "ingest", *map(str, LAND.values()))
    assert loaded.returncode == 0, loaded.stderr
    sql = "SELECT natural_key, price_krw, land_category, zoning FROM transactions"
    synced = sorted(rows(db_url, sql), key=lambda r: r["natural_key"])
    ingested = sorted(rows(other, sql), key=lambda r: r["natural_key"])
    assert synced == ingested and len(synced) == sum(kept(p) for p in LAND.values())
