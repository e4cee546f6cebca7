"""Start and drive the local emulator of the Vehicle Data Service.

>>> from vehicledata.testing import Emulator
>>> with Emulator() as emu:                      # doctest: +SKIP
...     print(emu.url)                           # http://127.0.0.1:40123
...     emu.fault("/api/trims/v2", status=503, count=2, retry_after=1)

The executable is ``vehicledata-emulator``: found through ``$VEHICLEDATA_EMULATOR_BIN``, next to
``vehicledata._core`` in ``bin/``, or in the ``bin/`` folder of any ``vehicledata.__path__`` entry.
The control plane it drives is documented in docs/testing.md.

The emulator is the one home of its defaults and demo accounts: :func:`emulator_defaults` and
:data:`DEMO_ACCOUNTS` read what ``vehicledata-emulator --print-defaults`` prints, and settings
left as None here are not passed, so the executable's own defaults apply.
"""
from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request
import weakref
from pathlib import Path
from typing import Any, Dict, IO, Iterator, List, Mapping, Optional, Sequence, Union

__all__ = ["DEMO_ACCOUNTS", "Emulator", "EmulatorError", "emulator_defaults", "find_executable"]

_EXE = "vehicledata-emulator"
#: The header carrying the ``--control-token`` on control-plane requests (docs/testing.md).
CONTROL_TOKEN_HEADER = "X-Emulator-Token"


class EmulatorError(RuntimeError):
    """The emulator could not be found, started or driven."""


def find_executable() -> str:
    """Path of the ``vehicledata-emulator`` executable (see the module docs for the search order)."""
    env = os.environ.get("VEHICLEDATA_EMULATOR_BIN")
    if env:
        if not os.access(env, os.X_OK):
            raise EmulatorError(f"VEHICLEDATA_EMULATOR_BIN={env} is not an executable file")
        return env
    candidates: List[Path] = []
    try:
        from vehicledata import _core

        candidates.append(Path(_core.__file__).resolve().parent / "bin" / _EXE)
    except ImportError:
        pass
    import vehicledata

    for entry in vehicledata.__path__:
        candidates.append(Path(entry) / "bin" / _EXE)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    tried = ", ".join(str(c) for c in candidates) or "(no candidates)"
    raise EmulatorError(f"cannot find {_EXE}; tried {tried}; set VEHICLEDATA_EMULATOR_BIN")


@functools.lru_cache(maxsize=None)
def _printed_defaults(exe: str) -> str:
    try:
        done = subprocess.run([exe, "--print-defaults"], stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EmulatorError(f"{exe} --print-defaults: {exc}") from None
    if done.returncode != 0:
        raise EmulatorError(f"{exe} --print-defaults exited with {done.returncode}: "
                            f"{done.stderr.decode('utf-8', 'replace').strip() or '(no stderr)'}")
    return done.stdout.decode("utf-8")


def emulator_defaults() -> Dict[str, Any]:
    """The emulator's defaults as ``vehicledata-emulator --print-defaults`` prints them (read once
    per executable; a fresh copy each call)::

        {"options": {"host": "127.0.0.1", "port": 0, "rate_limit": 600, ...},
         "accounts": {"premium": {"api_token": ..., "api_secret": ..., "subscribed": ...,
                                  "data_feed": ..., "rate_limit_type": ...}, "basic": ..., "free": ...}}
    """
    return dict(json.loads(_printed_defaults(find_executable())))


class _DemoAccounts(Mapping[str, Dict[str, Any]]):
    """The demo accounts by name, read from the emulator on first use (each item a fresh dict)."""

    def _accounts(self) -> Dict[str, Dict[str, Any]]:
        return dict(emulator_defaults()["accounts"])

    def __getitem__(self, name: str) -> Dict[str, Any]:
        return dict(self._accounts()[name])

    def __iter__(self) -> Iterator[str]:
        return iter(self._accounts())

    def __len__(self) -> int:
        return len(self._accounts())

    def __repr__(self) -> str:
        return repr(self._accounts())


#: The accounts the emulator knows when it is started without ``accounts`` ("premium", "basic",
#: "free"), as the emulator prints them (:func:`emulator_defaults`), e.g.
#: ``DEMO_ACCOUNTS["premium"]["api_token"]``.
DEMO_ACCOUNTS: Mapping[str, Dict[str, Any]] = _DemoAccounts()


def _flag_value(args: Sequence[str], flag: str) -> Optional[str]:
    """The value of the last ``flag VALUE`` or ``flag=VALUE`` in ``args``, else None."""
    value: Optional[str] = None
    for i, a in enumerate(args):
        if a == flag and i + 1 < len(args):
            value = args[i + 1]
        elif a.startswith(flag + "="):
            value = a[len(flag) + 1:]
    return value


#: The executable's numeric options, named as ``--print-defaults`` names them, with what they mean
#: (docs/emulator.md). :func:`build_args`, :class:`Emulator` and ``vehicledata emulator`` all take
#: these; the flag is the name with ``-`` for ``_`` (``max_headers`` -> ``--max-headers``).
NUMBER_OPTIONS: Dict[str, str] = {
    "port": "0 picks a free port",
    "rate_limit": "requests per window per account or address",
    "login_rate_limit": "logins per window per address",
    "window_seconds": "rate-limit window length",
    "token_ttl": "JWT lifetime in seconds",
    "threads": "worker threads (each busy with one complete request at a time)",
    "compute_workers": "of the workers, how many compute at once (the others wait: delay faults, a feed build); "
                       "0 is twice the cores, at least 2",
    "max_connections": "open connections at once; more wait in the listen backlog",
    "max_headers": "header fields per request; one more is a 431",
    "max_header_bytes": "request line plus header fields; more is a 431",
    "request_timeout": "seconds from a request's first byte to its last; then 408",
    "idle_timeout": "seconds a keep-alive connection may wait for its next request",
    "write_timeout": "seconds to send one whole response; a slower reader is dropped",
    "max_per_address": "open connections from one address (more: 503); 0 is half of max_connections",
    "response_cache_mb": "memory for rendered answers of the data endpoints; 0 disables the cache",
}


#: The environment variables the executable reads its secrets from when no flag sets them: a
#: process's environment is readable by its own user only, its command line by every local user.
JWT_SECRET_ENV = "VEHICLEDATA_EMULATOR_JWT_SECRET"
CONTROL_TOKEN_ENV = "VEHICLEDATA_EMULATOR_CONTROL_TOKEN"


def secret_env(*, jwt_secret: Optional[str] = None, control_token: Optional[str] = None,
               base: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """The environment to start the executable with: ``base`` (default ``os.environ``, whose own
    secret variables stay unless replaced) with the given secrets set. ValueError for an empty one."""
    env = dict(os.environ if base is None else base)
    for name, value in ((JWT_SECRET_ENV, jwt_secret), (CONTROL_TOKEN_ENV, control_token)):
        if value is not None:
            if not value:
                raise ValueError(f"{name}: the secret must not be empty")
            env[name] = value
    return env


def build_args(*, host: Optional[str] = None, db: Optional[Union[str, os.PathLike]] = None,
               accounts: Optional[str] = None,
               maintenance: bool = False, log: bool = False, deprecated_403: bool = False,
               parent_pid: Optional[int] = None,
               extra_args: Sequence[str] = (), **numbers: Optional[int]) -> List[str]:
    """Command-line flags of the executable for these settings; ``numbers`` are the
    :data:`NUMBER_OPTIONS` (``port=0``, ``rate_limit=5``, ...). None leaves the emulator's default
    (:func:`emulator_defaults`). The secrets go in the environment instead (:func:`secret_env`)."""
    unknown = sorted(set(numbers) - set(NUMBER_OPTIONS))
    if unknown:
        raise TypeError(f"build_args() got unexpected keyword argument(s): {', '.join(unknown)}")
    args: List[str] = []
    if host is not None:
        args += ["--host", host]
    for name in NUMBER_OPTIONS:
        number = numbers.get(name)
        if number is not None:
            args += ["--" + name.replace("_", "-"), str(int(number))]
    if db is not None:
        args += ["--db", os.fspath(db)]
    if accounts is not None:
        args += ["--accounts", accounts]
    if maintenance:
        args.append("--maintenance")
    if deprecated_403:
        args.append("--deprecated-403")
    if log:
        args.append("--log")
    if parent_pid is not None:
        args += ["--parent-pid", str(int(parent_pid))]
    return args + [str(a) for a in extra_args]


def _terminate(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()


class Emulator:
    """A running emulator process, as a context manager.

    ``db`` defaults to :func:`vehicledata.dataset.ensure_database` (built on first use, about a
    minute, with a line saying so and the build's stages on stderr). A database whose vPIC file is
    missing, damaged or incomplete does not start: :class:`EmulatorError` carries the emulator's
    one line naming the file.
    ``accounts`` is a list of account dicts (written to a temporary file) or a path to such a
    JSON file; without it the emulator uses :data:`DEMO_ACCOUNTS`. Settings left as None take
    the emulator's defaults (:func:`emulator_defaults`); ``host`` and ``port`` are set from the
    address the emulator prints once it has started. The numeric settings are
    :data:`NUMBER_OPTIONS` (``max_headers=50``, ``response_cache_mb=0``, ...).
    ``control_token`` starts it with that control token (also when ``--control-token`` is given in
    ``extra_args``); the control-plane methods then send it as ``X-Emulator-Token``. The secrets
    (``jwt_secret``, ``control_token``) reach the process in its environment (:func:`secret_env`),
    not on its command line, which every local user can read.
    ``die_with_parent`` (default True) passes ``--parent-pid``: the server ends with this Python
    process however it ends (``kill -9`` included; within about 2 s, pending requests or not),
    never left behind as an orphan, and not with the thread that started it.
    """

    def __init__(self, port: Optional[int] = None, host: Optional[str] = None,
                 db: Optional[Union[str, os.PathLike]] = None,
                 accounts: Optional[Union[str, os.PathLike, Sequence[Mapping[str, Any]]]] = None,
                 rate_limit: Optional[int] = None, login_rate_limit: Optional[int] = None,
                 token_ttl: Optional[int] = None, threads: Optional[int] = None, extra_args: Sequence[str] = (), *,
                 startup_timeout: float = 30.0, jwt_secret: Optional[str] = None,
                 window_seconds: Optional[int] = None, maintenance: bool = False,
                 deprecated_403: bool = False, die_with_parent: bool = True,
                 control_token: Optional[str] = None, max_connections: Optional[int] = None,
                 max_headers: Optional[int] = None, max_header_bytes: Optional[int] = None,
                 request_timeout: Optional[int] = None, idle_timeout: Optional[int] = None,
                 response_cache_mb: Optional[int] = None, write_timeout: Optional[int] = None,
                 max_per_address: Optional[int] = None, compute_workers: Optional[int] = None) -> None:
        self.host = host
        self.port = port
        self._db = db
        self._accounts = accounts
        self._jwt_secret = jwt_secret
        self._control_token = control_token
        self._settings = dict(rate_limit=rate_limit, login_rate_limit=login_rate_limit, token_ttl=token_ttl,
                              threads=threads, compute_workers=compute_workers, window_seconds=window_seconds,
                              maintenance=maintenance, deprecated_403=deprecated_403,
                              max_connections=max_connections, max_headers=max_headers,
                              max_header_bytes=max_header_bytes, request_timeout=request_timeout,
                              idle_timeout=idle_timeout, response_cache_mb=response_cache_mb,
                              write_timeout=write_timeout, max_per_address=max_per_address)
        self._die_with_parent = die_with_parent
        self._extra_args = [str(a) for a in extra_args]
        #: The control plane's token: a ``--control-token`` in ``extra_args`` (passed last, so the
        #: emulator keeps it), else ``control_token``.
        self.control_token: Optional[str] = _flag_value(self._extra_args, "--control-token") or control_token
        self._startup_timeout = startup_timeout
        self._proc: Optional[subprocess.Popen] = None
        self._tmpdir: Optional[tempfile.TemporaryDirectory] = None
        self._stderr: Optional[IO[bytes]] = None
        self.url: str = ""

    # ---- lifecycle -------------------------------------------------------------------
    def start(self) -> "Emulator":
        if self._proc is not None:
            return self
        exe = find_executable()
        db = self._db
        if db is None:
            from vehicledata import dataset

            db = dataset.ensure_database()
        accounts_path: Optional[str] = None
        if self._accounts is not None:
            if isinstance(self._accounts, (str, os.PathLike)):
                accounts_path = os.fspath(self._accounts)
            else:
                self._tmpdir = tempfile.TemporaryDirectory(prefix="vehicledata-emulator-")
                accounts_path = os.path.join(self._tmpdir.name, "accounts.json")
                with open(accounts_path, "w", encoding="utf-8") as fh:
                    json.dump([dict(a) for a in self._accounts], fh)
        args = [exe] + build_args(host=self.host, port=self.port, db=db, accounts=accounts_path,
                                  parent_pid=os.getpid() if self._die_with_parent else None,
                                  extra_args=self._extra_args, **self._settings)  # type: ignore[arg-type]
        env = secret_env(jwt_secret=self._jwt_secret, control_token=self._control_token)
        self._stderr = tempfile.TemporaryFile()
        self._proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=self._stderr, stdin=subprocess.DEVNULL,
                                      env=env)
        # An Emulator dropped without stop() still ends its process.
        weakref.finalize(self, _terminate, self._proc)
        line = self._first_line(self._proc, self._startup_timeout)
        prefix = "listening on "
        if not line.startswith(prefix):
            err = self._stderr_text()
            self.stop()
            raise EmulatorError(f"emulator did not start ({' '.join(args)}): "
                                f"{line.strip() or 'no output'}; stderr: {err.strip() or '(empty)'}")
        self.url = line[len(prefix):].strip()
        address = self.url.split("://", 1)[1]
        host, port = address.rsplit(":", 1)
        self.host = host[1:-1] if host.startswith("[") else host
        self.port = int(port)
        return self

    def _first_line(self, proc: subprocess.Popen, timeout: float) -> str:
        result: List[bytes] = []

        def read() -> None:
            assert proc.stdout is not None
            result.append(proc.stdout.readline())

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(timeout)
        if t.is_alive() or not result:
            err = self._stderr_text()
            self.stop()
            raise EmulatorError(f"emulator printed no address within {timeout:.0f}s; stderr: {err.strip() or '(empty)'}")
        return result[0].decode("utf-8", "replace")

    def _stderr_text(self) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0)
            return self._stderr.read().decode("utf-8", "replace")[-4000:]
        except (OSError, ValueError):
            return ""

    def stop(self) -> None:
        """Stops the process (SIGTERM, then SIGKILL after 5 s)."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(5)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(5)
            if proc.stdout is not None:
                proc.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._tmpdir is not None:
            self._tmpdir.cleanup()
            self._tmpdir = None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def returncode(self) -> Optional[int]:
        return None if self._proc is None else self._proc.poll()

    def __enter__(self) -> "Emulator":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"Emulator(url={self.url!r}, running={self.running})"

    # ---- control plane -----------------------------------------------------------------
    def _control(self, method: str, route: str, body: Optional[Mapping[str, Any]] = None) -> Any:
        if not self.url:
            raise EmulatorError("the emulator is not running")
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"} if data else {}
        if self.control_token is not None:
            headers[CONTROL_TOKEN_HEADER] = self.control_token
        req = urllib.request.Request(self.url + "/_emulator/" + route, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            raise EmulatorError(f"{method} /_emulator/{route}: {exc.code} {exc.read().decode(errors='replace')}") from None

    def health(self) -> Dict[str, Any]:
        return self._control("GET", "health")

    def reset(self) -> None:
        """Clears rate-limit windows, usage counters, faults, statistics, maintenance, the clock offset
        and every :meth:`touch`."""
        self._control("POST", "reset")

    def fault(self, path: str, status: int = 503, count: int = 1, retry_after: Optional[int] = None,
              action: str = "status", delay_ms: Optional[int] = None, body: Optional[str] = None) -> None:
        """Schedules a fault for the next ``count`` requests whose path starts with ``path``.

        action: "status" (answer ``status``), "drop" (close the connection without an answer),
        "truncate" (send half of the real body), "delay" (answer normally after ``delay_ms``).
        """
        spec: Dict[str, Any] = {"path": path, "count": count, "status": status, "action": action}
        if retry_after is not None:
            spec["retry_after"] = retry_after
        if delay_ms is not None:
            spec["delay_ms"] = delay_ms
        if body is not None:
            spec["body"] = body
        self._control("POST", "faults", spec)

    def clear_faults(self) -> None:
        self._control("DELETE", "faults")

    def maintenance(self, enabled: bool = True) -> None:
        self._control("POST", "maintenance", {"enabled": bool(enabled)})

    def shift_clock(self, seconds: int) -> Dict[str, Any]:
        """Sets the emulator's clock offset (seconds, absolute, not cumulative)."""
        return self._control("POST", "clock", {"offset_seconds": int(seconds)})

    def stats(self) -> Dict[str, Any]:
        return self._control("GET", "stats")

    def touch(self, table: str, ids: Sequence[int], modified: Optional[str] = None) -> Dict[str, Any]:
        """Sets ``modified`` of the records ``ids`` of ``table`` (a storage table: "trims",
        "models", "engines", ...) as if the service had changed them, for every later answer
        (searches, details, the data feed).

        ``modified``: ISO 8601 text with an offset (stored in the service's Eastern form);
        default the emulator clock's now. Returns ``{"touched": n, "modified": text, "missing":
        [ids not in the table]}``. :meth:`reset` undoes every touch. The emulator writes a
        private copy of its database on the first touch; the shared file is never changed.
        """
        body: Dict[str, Any] = {"table": table, "ids": [int(i) for i in ids]}
        if modified is not None:
            body["modified"] = modified
        return self._control("POST", "touch", body)
