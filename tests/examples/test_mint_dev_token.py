"""The token-minting example: its JWKS and token pass svc's own verifier and sign-in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from werkzeug.test import Client

from examples.mint_dev_token import AUDIENCE, ISSUER, mint
from svc_core.errors import JwtInvalid
from svc_server.identity import JwtVerifier
from svc_server.store import Store
from tests.conftest import ROOT, FakeClock


def test_the_token_verifies_against_the_written_jwks(tmp_path: Path) -> None:
    token = mint(tmp_path, "ana@example.com")
    verifier = JwtVerifier.from_files(tmp_path / "jwks.json", issuer=ISSUER, audience=AUDIENCE)
    identity = verifier.verify(token)
    assert identity.email == "ana@example.com" and identity.sub == "local|ana@example.com"
    other = JwtVerifier.from_files(tmp_path / "jwks.json", issuer=ISSUER, audience="another")
    with pytest.raises(JwtInvalid, match="audience"):  # the example is no skeleton key
        other.verify(token)


def test_the_token_signs_in_through_the_session_endpoint(
    tmp_path: Path, store: Store, make_app: Any, clock: FakeClock
) -> None:
    token = mint(tmp_path, "ana@example.com", now=clock())
    app = make_app(
        store,
        jwt_jwks_file=str(tmp_path / "jwks.json"),
        jwt_issuer=ISSUER,
        jwt_audience=AUDIENCE,
    )
    response = Client(app).post("/api/auth/session", json={"jwt": token})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["data"]["user"]["email"] == "ana@example.com"


def test_the_script_prints_a_token(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "examples/mint_dev_token.py", str(tmp_path), "bo@example.com"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.count(".") == 2 and (tmp_path / "jwks.json").exists()
