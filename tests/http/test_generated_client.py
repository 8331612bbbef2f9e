"""A client generated from ``/api/v1/openapi.json`` by openapi-python-client can ask for
CSV and gets the CSV text (not a JSON decode error), and still gets JSON as models.

The generator reads one media type per response (the first it knows), so each
CSV-capable route is also described, and served, as its own operation at the route's
path plus ``.csv`` whose 200 is ``text/csv`` only.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LiveServer
from tests.svc_cli import run_svc

pytest.importorskip(
    "openapi_python_client",
    reason="openapi-python-client is in the dev extra: pip install -e .[dev]",
)

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "molit" / "NRG_11680_202506.xml"
GENERATOR = Path(sys.executable).parent / "openapi-python-client"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, str, Path]]:
    """A real server with one district's deals, a starter key, and a client generated
    from the document that server serves."""
    base = tmp_path_factory.mktemp("generated")
    server = LiveServer(f"sqlite:///{base / 'svc.db'}")
    try:

        def svc(*args: str) -> str:  # in this process: the command's is not under test
            done = run_svc(*args, env={"SVC_DATABASE_URL": server.env["SVC_DATABASE_URL"]})
            assert done.returncode == 0, done.stderr
            return done.stdout

        svc("ingest", "rtms-commercial", str(FIXTURE))
        key = json.loads(svc("consumer", "create", "--plan", "pro", "--json"))["api_key"]
        with urllib.request.urlopen(server.url + "/api/v1/openapi.json", timeout=10) as r:
            (base / "openapi.json").write_bytes(r.read())
        done = subprocess.run(
            [str(GENERATOR), "generate", "--path", str(base / "openapi.json"), "--meta", "none",
             "--output-path", str(base / "svc_api_client")],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=base,
        )  # fmt: skip
        assert (base / "svc_api_client" / "client.py").is_file(), done.stdout + done.stderr
        yield server, key, base
    finally:
        server.stop()


PACKAGE = "svc_api_client"


@pytest.fixture(scope="module")
def client(served: tuple[LiveServer, str, Path]) -> Iterator[Any]:
    """The generated package, imported in this process, and its ``AuthenticatedClient``
    with the key; the package is forgotten again afterwards."""
    server, key, base = served
    sys.path.insert(0, str(base))
    try:
        package = importlib.import_module(PACKAGE)
        with package.AuthenticatedClient(
            base_url=server.url, token=key, prefix="", auth_header_name="X-API-Key"
        ) as made:
            yield made
    finally:
        sys.path.remove(str(base))
        for name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
            del sys.modules[name]


def operation(name: str) -> Any:
    """The generated module of one real-estate operation."""
    return importlib.import_module(f"{PACKAGE}.api.real_estate.{name}")


def test_a_generated_client_gets_csv_text(client: Any) -> None:
    coverage = operation("get_real_estate_coverage_csv").sync_detailed(
        client=client, sigungu_code="11680"
    )
    pulse = operation("get_real_estate_pulse_csv").sync(
        client=client, sigungu_code="11680", period="2025-06"
    )
    assert coverage.status_code.value == 200
    assert coverage.headers["content-type"].startswith("text/csv")
    assert isinstance(coverage.parsed, str) and isinstance(pulse, str)
    assert coverage.parsed.startswith("\ufeffsigungu_code,sigungu,")
    assert "\r\n11680,강남구," in coverage.parsed
    assert pulse.startswith("\ufeffsigungu_code,") and "\r\n11680," in pulse


def test_the_same_client_still_gets_json_as_models(client: Any) -> None:
    answer = operation("get_real_estate_coverage").sync(client=client, sigungu_code="11680")
    assert type(answer).__name__ == "GetRealEstateCoverageResponse200"
    assert len(answer.data) >= 1


def test_csv_operations_in_the_document(served: tuple[LiveServer, str, Path]) -> None:
    _, _, base = served
    document = json.loads((base / "openapi.json").read_text(encoding="utf-8"))
    paths = document["paths"]
    for path in ("pulse", "pulse/series", "coverage", "indices"):
        csv_op = paths[f"/api/v1/real-estate/{path}.csv"]["get"]
        json_op = paths[f"/api/v1/real-estate/{path}"]["get"]
        assert csv_op["operationId"] == json_op["operationId"] + "Csv"
        assert list(csv_op["responses"]["200"]["content"]) == ["text/csv"]
        # the negotiating operation keeps JSON first, CSV declared too
        assert list(json_op["responses"]["200"]["content"]) == ["application/json", "text/csv"]
        names = [p["name"] for p in csv_op["parameters"]]
        assert "format" not in names and "format" in [p["name"] for p in json_op["parameters"]]
    assert "/api/v1/real-estate/dimensions.csv" not in paths


def _get(server: LiveServer, path: str, headers: dict[str, str]) -> tuple[int, object, bytes]:
    req = urllib.request.Request(server.url + path, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def test_the_csv_form_answers_csv_whatever_is_accepted(
    served: tuple[LiveServer, str, Path],
) -> None:
    server, key, _ = served
    headers = {"X-API-Key": key, "Accept": "application/json"}
    status, first, body = _get(server, "/api/v1/real-estate/coverage.csv", headers)
    assert status == 200 and first["Content-Type"].startswith("text/csv")  # type: ignore[index]
    assert body.startswith("\ufeffsigungu_code,".encode())
    assert first["X-Svc-Vertical"] == "real_estate"  # type: ignore[index]
    # counted like the JSON form: one quota unit per 2xx
    status, again, _ = _get(server, "/api/v1/real-estate/coverage.csv?sigungu_code=11680", headers)
    assert status == 200
    assert int(again["X-Quota-Used"]) == int(first["X-Quota-Used"]) + 1  # type: ignore[index]
    # no format to negotiate; errors stay JSON; only CSV-capable routes have the form
    for path, code in (
        ("/api/v1/real-estate/coverage.csv?format=json", 400),
        ("/api/v1/real-estate/pulse.csv?sigungu_code=1", 400),
        ("/api/v1/real-estate/dimensions.csv", 404),
    ):
        status, reply, body = _get(server, path, headers)
        assert status == code, path
        assert reply["Content-Type"].startswith("application/json")  # type: ignore[index]
        assert json.loads(body)["error"]["code"] in ("INVALID_PARAMS", "NOT_FOUND")
