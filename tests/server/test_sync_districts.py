"""Which districts ``svc sync rtms`` reads: ``--all`` is every district in use, and
``--sigungu`` takes codes in use or unambiguous names, refusing a retired code with the
codes that replaced it. Through the real ``svc`` command, against the RTMS stand-in."""

from __future__ import annotations

import re

from tests.server.rtms_standin import StandIn
from tests.server.test_sync import svc, sync

ONE_MONTH = ("--from", "2025-06", "--to", "2025-06", "--kinds", "commercial", "--dry-run")


def planned(stdout: str) -> list[str]:
    return re.findall(r"^  commercial (\d{5}) 2025-06 \(new", stdout, re.MULTILINE)


def test_all_plans_every_district_in_use(sqlite_url: str, standin: StandIn) -> None:
    done = sync(sqlite_url, standin, "--all", *ONE_MONTH)
    assert done.returncode == 0, done.stderr
    codes = planned(done.stdout)
    assert len(codes) == len(set(codes)) > 240
    assert {"41192", "41194", "41196", "51110", "52111", "27720", "41591", "28710"} <= set(codes)
    assert not {"41190", "42110", "45111", "47720", "41590"} & set(codes)  # retired
    assert f"x {len(codes)} districts x 1 kinds" in done.stdout
    assert standin.calls == []


def test_sigungu_by_code_or_name(sqlite_url: str, standin: StandIn) -> None:
    for given in ("41192", "부천시원미구", "부천시 원미구", "Bucheon Wonmi"):
        done = sync(sqlite_url, standin, "--sigungu", given, *ONE_MONTH)
        assert done.returncode == 0, (given, done.stderr)
        assert planned(done.stdout) == ["41192"], given
    done = sync(sqlite_url, standin, "--sigungu", "강남구, 51110", *ONE_MONTH)
    assert planned(done.stdout) == ["11680", "51110"]


def test_a_retired_code_is_refused_naming_its_replacements(
    sqlite_url: str, standin: StandIn
) -> None:
    done = sync(sqlite_url, standin, "--sigungu", "41190", *ONE_MONTH)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "41190" in lines[0] and "retired on 2024-01-01" in lines[0]
    assert all(code in lines[0] for code in ("41192", "41194", "41196"))
    assert done.stdout == "" and standin.calls == []


def test_an_ambiguous_name_lists_the_candidates(sqlite_url: str, standin: StandIn) -> None:
    done = sync(sqlite_url, standin, "--sigungu", "중구", *ONE_MONTH)
    assert done.returncode == 2
    assert "ambiguous" in done.stderr
    assert all(code in done.stderr for code in ("11140", "26110", "27110", "30140", "31110"))
    unknown = sync(sqlite_url, standin, "--sigungu", "99999", *ONE_MONTH)
    assert unknown.returncode == 2 and "unknown district code 99999" in unknown.stderr


def test_status_takes_a_retired_code_too(sqlite_url: str, standin: StandIn) -> None:
    assert svc(sqlite_url, standin, "init").returncode == 0  # status reads; it makes none
    done = svc(sqlite_url, standin, "sync", "status", "--sigungu", "41190", "--kinds", "commercial",
               "--from", "2023-12", "--to", "2023-12")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "commercial 41190 부천시: complete 0, partial 0, failed 0, missing 1" in done.stdout
