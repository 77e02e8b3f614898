"""A stand-in identity provider's signing side for tests: an RSA key, its JWKS, and tokens signed with it."""

from __future__ import annotations

import json
import time
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

ISSUER_AUDIENCE = "https://mcp.example.org/mcp"


class Signer:
    def __init__(self, issuer: str, kid: str = "key-1") -> None:
        self.issuer = issuer
        self.kid = kid
        self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    def jwks(self) -> dict[str, Any]:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.private.public_key()))
        return {"keys": [{**jwk, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def token(self, subject: str, *, groups: list[str] | None = None, audience: str = ISSUER_AUDIENCE,
              issuer: str | None = None, lifetime: float = 300, **claims: Any) -> str:
        now = int(time.time())
        body = {"sub": subject, "iss": issuer or self.issuer, "aud": audience, "iat": now, "exp": now + int(lifetime),
                **({"groups": groups} if groups is not None else {}), **claims}
        return jwt.encode(body, self.private, algorithm="RS256", headers={"kid": self.kid})
