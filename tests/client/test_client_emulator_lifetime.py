"""vehicledata.testing.Emulator's lifetime (issue 25 item 9): it survives the thread that started
it, and it does not outlive its parent by a pending delay fault."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

from vehicledata.testing import Emulator


def _ended(pid: int) -> bool:
    """No such process, or a zombie waiting for its parent to reap it."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_an_emulator_started_from_a_short_lived_thread_survives_it(database):
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("emu", Emulator(db=database).start()))
    t.start()
    t.join(60)
    emu = box["emu"]
    try:
        time.sleep(1.0)  # the kernel's parent-death signal fires when the starting thread ends
        assert emu.running and emu.returncode is None
        assert emu.health()["status"] == "ok"
    finally:
        emu.stop()


def test_a_pending_delay_fault_does_not_keep_an_orphan_alive(database, tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(f"""
        import threading, time, urllib.request
        from vehicledata.testing import Emulator
        emu = Emulator(db={str(database)!r}).start()
        emu.fault("/api/years", action="delay", delay_ms=60000, count=1)
        threading.Thread(target=lambda: urllib.request.urlopen(emu.url + "/api/years", timeout=120),
                         daemon=True).start()
        time.sleep(0.5)  # the request is inside its delay
        print(emu._proc.pid, flush=True)
        time.sleep(120)
    """))
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    try:
        server_pid = int(parent.stdout.readline())
        os.kill(server_pid, 0)  # running
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        # The verdict is whether it ends before the pending request's 60 s delay would have let a
        # graceful stop end it; 30 s is a hang guard that far above any machine's pace, not a speed check.
        started = time.monotonic()
        while time.monotonic() - started < 30 and not _ended(server_pid):
            time.sleep(0.05)
        took = time.monotonic() - started
        ended = _ended(server_pid)
        if not ended:
            os.kill(server_pid, signal.SIGKILL)
        assert ended, f"the emulator outlived its parent by {took:.1f} s with a delay fault pending"
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)
