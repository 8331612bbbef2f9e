"""A throwaway identity provider for local testing: never use it in production.

    python examples/mint_dev_token.py [DIR] [EMAIL]

Makes an RSA-2048 key pair, writes the public half as ``DIR/jwks.json`` (the file
``SVC_JWT_JWKS_FILE`` names) and prints a 10-minute RS256 token for EMAIL with the
issuer and audience below, ready for ``POST /api/auth/session`` or the ``/signin`` form.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

ISSUER = "https://idp.example.test/"
AUDIENCE = "svc"
KID = "local-1"


def mint(directory: Path, email: str, now: float | None = None) -> str:
    """Write ``directory/jwks.json`` and return a token for ``email`` signed by its key."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(RSAAlgorithm.to_jwk(key.public_key()))
    public.update({"kid": KID, "alg": "RS256", "use": "sig"})
    (directory / "jwks.json").write_text(json.dumps({"keys": [public]}), encoding="utf-8")
    issued = int(time.time() if now is None else now)
    claims = {
        "sub": "local|" + email,
        "email": email,
        "iss": ISSUER,
        "aud": AUDIENCE,
        "iat": issued,
        "exp": issued + 600,
    }
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": KID})


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path()
    print(mint(target, sys.argv[2] if len(sys.argv) > 2 else "ana@example.com"))
