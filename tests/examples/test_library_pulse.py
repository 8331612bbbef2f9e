"""examples/library_pulse.py prints exactly the rows the server serves for the same files.

Each MOLIT file is ingested into a real store (``svc ingest``'s code path) and the pulse
is fetched through the WSGI app; the example computes its rows from the same file with
svc_core alone. The two must agree field by field, for every sample file, with and
without a property type, for a month and the default rolling window.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from examples.library_pulse import main
from svc_core.models import PROPERTY_TYPES
from svc_server.store import Store, open_store
from tests.conftest import RE_NOW
from tests.http.realestate_support import (
    MOLIT_FILES,
    NRG_GANGNAM,
    Api,
    load,
    make_app,
)

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "library_pulse.py"
TODAY = datetime.fromtimestamp(RE_NOW, UTC).date().isoformat()
"""The day of the server's clock in these tests."""


def month_of(path: Path) -> str:
    """``NRG_11680_202506.xml`` → ``2025-06``."""
    stamp = path.stem.rsplit("_", 1)[-1]
    return f"{stamp[:4]}-{stamp[4:]}"


def code_of(path: Path) -> str:
    return path.stem.rsplit("_", 2)[-2]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Store]]:
    """One store per sample file holding that file alone, plus one holding all four."""
    made: dict[str, Store] = {}
    for name, files in [(p.name, [(k, p)]) for k, p in MOLIT_FILES] + [("all", MOLIT_FILES)]:
        store = open_store(f"sqlite:///{tmp_path_factory.mktemp('lib') / 'svc.db'}")
        store.migrate()
        for kind, path in files:
            load(store, kind, path)
        made[name] = store
    yield made
    for store in made.values():
        store.close()


def served(store: Store, params: dict[str, str]) -> list[dict[str, Any]]:
    """The server's pulse ``data`` (empty on its 404)."""
    response = Api(make_app(store)).get("pulse", params)
    if response.status_code == 404:
        return []
    assert response.status_code == 200, response.get_data(as_text=True)
    return list(response.get_json()["data"])


def printed(capsys: pytest.CaptureFixture[str], argv: list[str]) -> list[dict[str, Any]]:
    """The example's JSON array (empty when it exits 1 for want of a cohort)."""
    status = main(argv)
    out = capsys.readouterr()
    if status == 1:
        assert "no cohort" in out.err
        return []
    assert status == 0, out.err
    return list(json.loads(out.out))


VARIANTS = [None, *PROPERTY_TYPES]


@pytest.mark.parametrize(("kind", "path"), MOLIT_FILES, ids=[p.name for _, p in MOLIT_FILES])
@pytest.mark.parametrize("property_type", VARIANTS)
@pytest.mark.parametrize("period", ["month", "default"])
def test_the_example_prints_what_the_server_serves(
    stores: dict[str, Store],
    capsys: pytest.CaptureFixture[str],
    kind: str,
    path: Path,
    property_type: str | None,
    period: str,
) -> None:
    params = {"sigungu_code": code_of(path)}
    argv = [str(path), "--today", TODAY, "--base-url", "https://api.example.com"]
    if period == "month":
        params["period"] = argv_period = month_of(path)
        argv += ["--period", argv_period]
    if property_type is not None:
        params["property_type"] = property_type
        argv += ["--property-type", property_type]
    expected = served(stores[path.name], params)
    assert printed(capsys, argv) == expected
    if property_type is None:
        assert expected, "every sample file has cohorts"


@pytest.mark.parametrize("code", ["11680", "11110"])
def test_several_files_merge_as_the_store_holds_them(
    stores: dict[str, Store], capsys: pytest.CaptureFixture[str], code: str
) -> None:
    argv = [str(p) for _, p in MOLIT_FILES] + ["--sigungu-code", code]
    argv += ["--today", TODAY, "--base-url", "https://api.example.com"]
    expected = served(stores["all"], {"sigungu_code": code})
    assert expected
    assert printed(capsys, argv) == expected
    # last_6m ends at June 2025; only Gangnam's June is loaded, Jongno's May is page 1 of 4
    loaded = 1 if code == "11680" else 0
    assert {(r["complete"], r["months_loaded"], r["months_expected"]) for r in expected} == {
        (False, loaded, 6)
    }


def test_files_of_several_districts_need_a_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(p) for _, p in MOLIT_FILES]) == 1
    assert "--sigungu-code" in capsys.readouterr().err


def test_a_malformed_period_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(MOLIT_FILES[0][1]), "--period", "2025-13"]) == 1
    assert "period" in capsys.readouterr().err.lower()


def test_the_script_on_the_real_sample_matches_the_server(stores: dict[str, Store]) -> None:
    """The acceptance run of issue 12, as a user types it (naming the server the rows
    link to; today's date judges provisional, and June 2025 is long final)."""
    sample = NRG_GANGNAM
    out = subprocess.run(
        [
            sys.executable,
            str(EXAMPLE),
            str(sample),
            "--period",
            "2025-06",
            "--base-url",
            "https://api.example.com",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    expected = served(
        stores["NRG_11680_202506.xml"], {"sigungu_code": "11680", "period": "2025-06"}
    )
    assert json.loads(out) == expected
    assert len(expected) >= 2
