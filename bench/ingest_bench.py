"""Ingest: rows per second of ``svc ingest rtms-commercial`` vs plain ``executemany``.

A synthetic RTMS open-API XML document of N items (same shape as the real
``NRG_11680_202506.xml`` sample: same tags, blanks as one space, amounts with commas) is
loaded with svc's ingest (parse, validate, natural keys, duplicate check, rollup, one
transaction) into a fresh SQLite store; the floor inserts the same parsed rows into a
table of the same columns with one ``sqlite3.executemany`` in one transaction. Also
timed: svc's parse alone, and the bare minimum of reading the XML in Python
(ElementTree's C parser, leaves into dicts): that alone takes about as long as the whole
executemany, which bounds the ratio any XML ingest can reach. Prints JSON.
"""

from __future__ import annotations

import json
import random
import sqlite3
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from svc_core.sources import rtms
from svc_server import ingest
from svc_server.store import open_store
from svc_server.store.realestate import TRANSACTION_COLUMNS, transaction_rows

USES = ("업무", "제1종근린생활", "제2종근린생활", "판매", "숙박", "기타")
DONGS = ("역삼동", "삼성동", "논현동", "청담동", "대치동", "신사동")


def synthetic_xml(items: int, seed: int = 3) -> bytes:
    rng = random.Random(seed)
    parts = [
        '<?xml version="1.0" encoding="utf-8"?><response><header><resultCode>000'
        "</resultCode><resultMsg>OK</resultMsg></header><body><items>"
    ]
    for _ in range(items):
        amount = f"{rng.randrange(5_000, 2_000_000):,}"
        parts.append(
            "<item><buildYear>1995</buildYear>"
            f"<buildingAr>{rng.uniform(20, 3000):.2f}</buildingAr>"
            f"<buildingType>{rng.choice(('일반', '집합'))}</buildingType>"
            f"<buildingUse>{rng.choice(USES)}</buildingUse><buyerGbn>법인</buyerGbn>"
            "<cdealDay> </cdealDay><cdealType> </cdealType>"
            f"<dealAmount>{amount}</dealAmount><dealDay>{rng.randrange(1, 29)}</dealDay>"
            "<dealMonth>6</dealMonth><dealYear>2025</dealYear><dealingGbn>중개거래</dealingGbn>"
            "<estateAgentSggNm>서울 강남구</estateAgentSggNm><floor> </floor>"
            f"<jibun>{rng.randrange(1, 999)}</jibun><landUse>일반상업</landUse>"
            f"<plottageAr>{rng.uniform(50, 900):.1f}</plottageAr><sggCd>11680</sggCd>"
            "<sggNm>강남구</sggNm><shareDealingType> </shareDealingType><slerGbn>개인</slerGbn>"
            f"<umdNm>{rng.choice(DONGS)}</umdNm></item>"
        )
    parts.append(
        f"</items><numOfRows>{items}</numOfRows><pageNo>1</pageNo>"
        f"<totalCount>{items}</totalCount></body></response>"
    )
    return "".join(parts).encode("utf-8")


def main(items: int = 50_000) -> dict[str, float]:
    data = synthetic_xml(items)
    work = Path(tempfile.mkdtemp(prefix="svc-ingest-"))
    store = open_store(f"sqlite:///{work / 'svc.db'}")
    store.migrate()
    t = time.perf_counter()
    report = ingest.ingest(store, "rtms-commercial", data, path="bench.xml", now=time.time())
    svc_s = time.perf_counter() - t
    store.close()

    # The same rows svc writes, from the same function.
    parsed = rtms.parse_rtms(data, "commercial", path="bench.xml").transactions
    rows = transaction_rows(parsed, synthetic=False)
    conn = sqlite3.connect(work / "floor.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    # every column svc writes (TRANSACTION_COLUMNS), the first one the key
    columns = ", ".join(
        f"{c} TEXT PRIMARY KEY" if i == 0 else c for i, c in enumerate(TRANSACTION_COLUMNS)
    )
    conn.execute(f"CREATE TABLE t ({columns})")
    t = time.perf_counter()
    conn.execute("BEGIN")
    marks = ",".join("?" * len(TRANSACTION_COLUMNS))
    conn.executemany(f"INSERT INTO t VALUES ({marks})", rows)
    conn.execute("COMMIT")
    floor_s = time.perf_counter() - t
    # Where the time goes: svc's parse alone, and the least any Python reader of this XML
    # can do (ElementTree's C parser, each item's leaves into a dict, nothing checked).
    t = time.perf_counter()
    rtms.parse_rtms(data, "commercial", path="bench.xml")
    parse_s = time.perf_counter() - t
    t = time.perf_counter()
    root = ET.fromstring(data)  # noqa: S314 - our own synthetic document
    leaves = [{c.tag: c.text or "" for c in item} for item in root.iter("item")]
    xml_s = time.perf_counter() - t
    assert len(leaves) == items
    result = {
        "items": items,
        "loaded": report.loaded,
        "svc_rows_per_s": report.loaded / svc_s,
        "executemany_rows_per_s": len(rows) / floor_s,
        "svc_parse_rows_per_s": items / parse_s,
        "xml_read_rows_per_s": items / xml_s,
    }
    result["ratio"] = result["svc_rows_per_s"] / result["executemany_rows_per_s"]
    result["xml_read_ratio"] = result["xml_read_rows_per_s"] / result["executemany_rows_per_s"]
    print(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 50_000)
