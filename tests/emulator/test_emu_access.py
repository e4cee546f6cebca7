"""Login, JWT claims and checks, access rules 1-4 of SPEC.md, account and data-feed auth."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
import uuid
from typing import Any, Dict

import pytest

from emu_support import CONFORMANCE_SECRET, DEMO_SQL, Db, Http, assert_error
from vehicledata.testing import DEMO_ACCOUNTS, Emulator


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def make_jwt(header: Dict[str, Any], claims: Dict[str, Any], secret: str = CONFORMANCE_SECRET) -> str:
    signing = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
    sig = hmac.new(secret.encode(), signing.encode(), hashlib.sha256).digest()
    return f"{signing}.{b64(sig)}"


def claims_of(token: str) -> Dict[str, Any]:
    return json.loads(unb64(token.split(".")[1]))


def test_login_returns_a_plain_text_hs256_jwt(api: Http) -> None:
    acct = DEMO_ACCOUNTS["premium"]
    before = int(time.time())
    r = api.post_json("/api/auth/login", {"api_token": acct["api_token"], "api_secret": acct["api_secret"]})
    assert r.status == 200
    assert r.headers["content-type"].startswith("text/plain")
    token = r.text
    header_b64, payload_b64, sig_b64 = token.split(".")
    assert json.loads(unb64(header_b64)) == {"typ": "JWT", "alg": "HS256"}
    expected_sig = hmac.new(CONFORMANCE_SECRET.encode(), f"{header_b64}.{payload_b64}".encode(), hashlib.sha256).digest()
    assert unb64(sig_b64) == expected_sig
    c = claims_of(token)
    assert list(c) == ["iss", "sub", "aud", "exp", "iat", "jti", "user"]
    assert c["iss"] == "carapi.app"
    assert c["sub"] == c["aud"] and uuid.UUID(c["sub"]).version == 4
    assert uuid.UUID(c["jti"]).version == 4
    assert c["exp"] - c["iat"] == 604800
    assert before - 5 <= c["iat"] <= int(time.time()) + 5
    assert c["user"] == {"subscriptions": ["premium"], "rate_limit_type": "hard",
                         "addons": {"antique_vehicles": True, "data_feed": True}}


@pytest.mark.parametrize("name", list(DEMO_ACCOUNTS))
def test_claims_follow_the_account(tokens: Dict[str, str], name: str) -> None:
    acct = DEMO_ACCOUNTS[name]
    c = claims_of(tokens[name])
    assert c["user"]["rate_limit_type"] == acct["rate_limit_type"]
    assert c["user"]["addons"]["data_feed"] == acct["data_feed"]
    assert bool(c["user"]["subscriptions"]) == acct["subscribed"]


def test_same_account_same_subject_new_jti(api: Http, tokens: Dict[str, str]) -> None:
    again = api.login("basic")
    assert claims_of(again)["sub"] == claims_of(tokens["basic"])["sub"]
    assert claims_of(again)["jti"] != claims_of(tokens["basic"])["jti"]
    assert claims_of(tokens["basic"])["sub"] != claims_of(tokens["free"])["sub"]


@pytest.mark.parametrize("body,status,part", [
    (b"", 400, "body"), (b"not json", 400, "not valid JSON"), (b"[]", 400, "object"),
    (b'{"api_token":"demo-free-token"}', 400, "api_secret"), (b'{"api_secret":"x"}', 400, "api_token"),
    (b'{"api_token":1,"api_secret":"x"}', 400, "api_token"),
    (b'{"api_token":"demo-free-token","api_secret":"wrong"}', 401, "Unauthorized"),
    (b'{"api_token":"nobody","api_secret":"demo-free-secret"}', 401, "Unauthorized"),
])
def test_login_errors_are_text_plain(api: Http, body: bytes, status: int, part: str) -> None:
    r = api.request("POST", "/api/auth/login", body=body, headers={"Content-Type": "application/json"})
    assert r.status == status
    assert r.headers["content-type"].startswith("text/plain")
    assert part in r.text


def test_demo_without_token_full_with_subscription(api: Http, db: Db, tokens: Dict[str, str]) -> None:
    demo_total = db.count("trims", DEMO_SQL)
    full_total = db.count("trims")
    assert api.get("/api/trims/v2").json()["collection"]["total"] == demo_total
    assert api.get("/api/trims/v2", token=tokens["premium"]).json()["collection"]["total"] == full_total
    assert api.get("/api/trims/v2", token=tokens["basic"]).json()["collection"]["total"] == full_total
    # An account without a subscription keeps the demo data-set.
    assert api.get("/api/trims/v2", token=tokens["free"]).json()["collection"]["total"] == demo_total
    old = db.one("SELECT id FROM trims WHERE year < 2015 ORDER BY id LIMIT 1")
    assert api.get(f"/api/trims/v2/{old}").status == 404
    assert api.get(f"/api/trims/v2/{old}", token=tokens["premium"]).json()["id"] == old
    assert api.get(f"/api/bodies/v2?trim_id={old}").json()["collection"]["total"] == 0
    assert api.get(f"/api/bodies/v2?trim_id={old}", token=tokens["basic"]).json()["collection"]["total"] == 1


def valid_claims(sub: str, **over: Any) -> Dict[str, Any]:
    now = int(time.time())
    c = {"iss": "carapi.app", "sub": sub, "aud": sub, "exp": now + 600, "iat": now, "jti": str(uuid.uuid4()),
         "user": {"subscriptions": ["premium"], "rate_limit_type": "hard",
                  "addons": {"antique_vehicles": True, "data_feed": True}}}
    c.update(over)
    return c


def test_forged_tokens_are_invalid(api: Http, db: Db, tokens: Dict[str, str]) -> None:
    demo_total = db.count("trims", DEMO_SQL)
    sub = claims_of(tokens["premium"])["sub"]
    good = make_jwt({"typ": "JWT", "alg": "HS256"}, valid_claims(sub))
    assert api.get("/api/trims/v2?limit=1", token=good).json()["collection"]["total"] == db.count("trims")
    bad = {
        "wrong secret": make_jwt({"typ": "JWT", "alg": "HS256"}, valid_claims(sub), secret="other"),
        "alg none": b64(b'{"typ":"JWT","alg":"none"}') + "." + b64(json.dumps(valid_claims(sub)).encode()) + ".",
        "alg HS512": make_jwt({"typ": "JWT", "alg": "HS512"}, valid_claims(sub)),
        "expired": make_jwt({"typ": "JWT", "alg": "HS256"}, valid_claims(sub, exp=int(time.time()) - 10)),
        "malformed": "abc.def",
        "garbage": "!!!.???.###",
        "tampered": tokens["free"][:-3] + ("AAA" if not tokens["free"].endswith("AAA") else "BBB"),
    }
    for name, token in bad.items():
        r = api.get("/api/trims/v2?limit=1", token=token)
        assert r.status == 200, name
        assert r.json()["collection"]["total"] == demo_total, name  # rule 3: back to the demo set
        assert_error(api.get("/api/account/requests-today", token=token), 500, "UnauthenticatedException",
                     "/api/account/requests-today")


def test_token_expires_after_ttl(clean: Emulator, api: Http, db: Db) -> None:
    token = api.login("premium")
    assert api.get("/api/account/requests-today", token=token).status == 200
    clean.shift_clock(604800 - 60)
    assert api.get("/api/trims/v2?limit=1", token=token).json()["collection"]["total"] == db.count("trims")
    clean.shift_clock(604800 + 1)
    r = api.get("/api/account/requests-today", token=token)
    assert_error(r, 500, "UnauthenticatedException", "/api/account/requests-today", "expired")
    assert api.get("/api/trims/v2?limit=1", token=token).json()["collection"]["total"] == db.count("trims", DEMO_SQL)
    fresh = api.login("premium")  # issued on the shifted clock
    assert claims_of(fresh)["iat"] >= int(time.time()) + 604800


def test_short_ttl_emulator(database: Any) -> None:
    with Emulator(db=database, token_ttl=60) as emu:
        h = Http(emu.url)
        c = claims_of(h.login("free"))
        assert c["exp"] - c["iat"] == 60
        h.close()


def test_account_endpoints_need_a_valid_token(api: Http) -> None:
    for path in ("/api/account/requests", "/api/account/requests-today"):
        assert_error(api.get(path), 500, "UnauthenticatedException", path, "Unauthenticated")
        assert_error(api.get(path, headers={"Authorization": "Basic eDp5"}), 500, "UnauthenticatedException", path)


def test_data_feed_access(api: Http, tokens: Dict[str, str]) -> None:
    r = api.get("/api/data-feeds/download")
    assert r.status == 401 and r.headers["content-type"].startswith("text/plain") and "Unauthorized" in r.text
    r = api.get("/api/data-feeds/download", token="not-a-token")
    assert r.status == 401 and r.headers["content-type"].startswith("text/plain")
    for name in ("basic", "free"):
        r = api.get("/api/data-feeds/download", token=tokens[name])
        assert r.status == 403 and r.headers["content-type"].startswith("text/plain") and "Forbidden" in r.text


def test_custom_accounts_file(database: Any, tmp_path: Any) -> None:
    accounts = [{"api_token": "t1", "api_secret": "s1", "subscribed": True, "data_feed": False,
                 "rate_limit_type": "soft"}]
    with Emulator(db=database, accounts=accounts) as emu:
        h = Http(emu.url)
        r = h.post_json("/api/auth/login", {"api_token": "t1", "api_secret": "s1"})
        assert r.status == 200 and claims_of(r.text)["user"]["rate_limit_type"] == "soft"
        r = h.post_json("/api/auth/login", {"api_token": "demo-premium-token", "api_secret": "demo-premium-secret"})
        assert r.status == 401
        h.close()


def test_bearer_scheme_is_case_insensitive(api: Http, db: Db, tokens: Dict[str, str]) -> None:
    r = api.get("/api/trims/v2?limit=1", headers={"Authorization": "bearer " + tokens["premium"]})
    assert r.json()["collection"]["total"] == db.count("trims")
