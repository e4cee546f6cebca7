#!/usr/bin/env python3
"""Checks an installed vehicledata wheel from outside the source tree (tools/wheels/test.sh in each
Debian root; cibuildwheel's test-command). Exits non-zero on the first failure.

    python smoke.py [--readme README.md] [--expect-data]

1. `vd.show_versions()`: the lean libcurl (HTTP2 and SSL among its features, http and https its
   only protocols), simdjson, SQLite, OpenSSL and the CA bundle;
2. the README's quick start against the bundled emulator: with --expect-data, three 2019 BMW
   trims and a frame from a database built from the `pyvehicledata-data` package (real BMWs);
   without it (no data package, VEHICLEDATA_OFFLINE=1) it must stop with the one-line
   SourceError naming the pyvehicledata-data wheel (no raw data travels in the package's wheel);
3. TLS against a self-signed loopback server (`openssl` makes the certificate): trusted through
   SSL_CERT_FILE it answers, untrusted it fails with a TransportError naming the certificate.
tests/test_wheel.py (the developer wheel in a fresh venv) uses its quick start, certificate, server
and client (this file must stay standalone: test.sh copies it alone into each Debian root).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Iterator, Tuple

HERE = Path(__file__).resolve().parent


def check(cond: bool, what: str) -> None:
    if not cond:
        raise SystemExit(f"smoke: FAILED: {what}")
    print(f"smoke: ok: {what.splitlines()[0][:100]}", flush=True)


def versions() -> None:
    import vehicledata as vd
    buf = io.StringIO()
    vd.show_versions(file=buf)
    text = buf.getvalue()
    print(text, end="")
    from vehicledata._versions import versions as as_dict
    got = as_dict()
    curl = got["libcurl"]
    check("HTTP2" in curl and " SSL" in curl and "libz" in curl, f"libcurl features: {curl}")
    check(curl.endswith("protocols: http https)"), f"libcurl protocols only http and https: {curl}")
    check(all(got.get(k) for k in ("simdjson", "SQLite", "OpenSSL", "CA bundle")), "every library reports a version")


def readme_quick_start(readme: Path) -> str:
    """The README's quick start: the ```python block under "## Quick start" ("" if there is none)."""
    match = re.search(r"^## Quick start\n.*?```python\n(.*?)```", readme.read_text(), re.S | re.M)
    return match.group(1) if match else ""


def quick_start(readme: Path, expect_data: bool) -> None:
    code = readme_quick_start(readme)
    check(bool(code), "README has a quick start")
    out = io.StringIO()
    if not expect_data:
        from vehicledata.dataset import SourceError
        try:
            with redirect_stdout(out):
                exec(compile(code, str(readme), "exec"), {})
        except SourceError as exc:
            print(f"without data: {exc}")
            check("pyvehicledata-data wheel" in str(exc) and "\n" not in str(exc),
                  "without data the quick start stops with one line naming the data package")
            return
        check(False, "without data the quick start stops with a SourceError")
    with redirect_stdout(out):
        exec(compile(code, str(readme), "exec"), {})
    lines = out.getvalue().splitlines()
    print(out.getvalue(), end="")
    check(len(lines) >= 5 and all(re.fullmatch(r"\d+ .+ \d+", line) for line in lines[:3]),
          "quick start prints three trims")
    check(lines[3].split() == ["make", "model", "trim", "horsepower_hp"], "quick start prints the frame")
    from vehicledata.dataset import paths, store
    meta = store.read_meta(paths.default_db_path()) or {}
    check("vehicledata_data" in meta.get("source", ""), f"the database came from pyvehicledata-data: {meta}")


# A loopback HTTPS server (arguments: certificate, key) answering every GET with {"path": its path};
# prints its port, stops after two minutes.
SERVER = (
    "import http.server, json, ssl, sys, threading\n"
    "class H(http.server.BaseHTTPRequestHandler):\n"
    "    def do_GET(self):\n"
    "        body = json.dumps({'path': self.path}).encode()\n"
    "        self.send_response(200); self.send_header('Content-Type', 'application/json')\n"
    "        self.send_header('Content-Length', str(len(body))); self.end_headers(); self.wfile.write(body)\n"
    "    def log_message(self, *a): pass\n"
    "srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)\n"
    "ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); ctx.load_cert_chain(sys.argv[1], sys.argv[2])\n"
    "srv.socket = ctx.wrap_socket(srv.socket, server_side=True)\n"
    "threading.Timer(120, srv.shutdown).start()\n"
    "print(srv.server_address[1], flush=True); srv.serve_forever()\n")
# The client (argument: the server's port): {"ok": the answer} or {"error": the TransportError's message}.
CLIENT = (
    "import json, sys, vehicledata as vd\n"
    "api = vd.Client(base_url='https://127.0.0.1:' + sys.argv[1], api_token='', api_secret='', retry=0)\n"
    "try:\n"
    "    print(json.dumps({'ok': api.get_json('/api/ping')}))\n"
    "except vd.TransportError as e:\n"
    "    print(json.dumps({'error': str(e)}))\n")


def self_signed(folder: Path) -> Tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (`openssl`), in folder."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True, timeout=120)
    return cert, key


@contextmanager
def tls_server(cert: Path, key: Path) -> Iterator[str]:
    """A loopback HTTPS server (SERVER, under this Python) with that certificate; yields its port."""
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(cert), str(key)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        server.terminate()
        server.wait(timeout=30)


def tls() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = self_signed(Path(tmp))
        with tls_server(cert, key) as port:
            env = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "CURL_CA_BUNDLE")}

            def run(**extra: str) -> dict:
                proc = subprocess.run([sys.executable, "-c", CLIENT, port], env={**env, **extra},
                                      capture_output=True, text=True, timeout=120)
                check(proc.returncode == 0, f"TLS client ran: {proc.stderr[-2000:]}")
                return json.loads(proc.stdout)
            trusted = run(SSL_CERT_FILE=str(cert))
            check(trusted == {"ok": {"path": "/api/ping"}}, f"TLS verified against the trusted certificate: {trusted}")
            untrusted = run()
            check("certificate" in untrusted.get("error", "").lower(), f"untrusted certificate refused: {untrusted}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--readme", type=Path, default=HERE.parents[1] / "README.md")
    ap.add_argument("--expect-data", action="store_true")
    args = ap.parse_args()
    import vehicledata
    check(not str(Path(vehicledata.__file__).resolve()).startswith(str(HERE.parents[1] / "python")),
          f"vehicledata comes from the installed wheel: {vehicledata.__file__}")
    versions()
    tls()
    quick_start(args.readme, args.expect_data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
