"""Page bytes -> Python records, reading three fields of each: ours against json, orjson and msgspec.

Ours decodes a 1000-record trims page with the client's decoder and iterates its `Record`s
(`vehicledata.pager.records_of`, what `for trim in pager` yields), reading `year`, `make` and
`msrp` of each. The peers decode the same bytes into dicts (`json.loads`, `orjson.loads`,
`msgspec.json.decode`) or into `msgspec.Struct`s declaring only those three fields (msgspec's
fastest form: it skips the others), and read the same three fields. Target: no slower than
`orjson.loads`. Instructions per call of every contender by callgrind, all in one fresh process
(harness.instructions_per_call), printed and tabled with their ratio to ours.

    python benchmarks/decode_records.py [--rounds 7] [--quick]
"""
from __future__ import annotations

import json
import sys
from typing import Any, Callable, Dict, List, Optional

import msgspec

import harness


class Trim(msgspec.Struct):
    """The three fields read; msgspec skips the others while decoding."""

    year: int
    make: str
    msrp: Optional[int] = None


class Envelope(msgspec.Struct):
    data: List[Trim]


SCENARIO = "records"
CPU_SHARE = ("ours and every peer in turn in one process, every thread of it pinned to one core while timed "
             "(none of the contenders starts threads)")
TITLE = "2. Page bytes -> Python records (three fields read)"
ORDER = 20

OURS = "vehicledata Records"


def contenders(body: bytes) -> Dict[str, Callable[[], Any]]:
    import msgspec
    import orjson

    from vehicledata import _core
    from vehicledata.pager import records_of

    dec_dict = msgspec.json.Decoder()
    dec_struct = msgspec.json.Decoder(Envelope)

    def ours() -> int:
        s = 0
        for r in records_of(_core.client.decode(body, "trim", "envelope", "")):
            s += r.year + len(r.make) + (r.msrp or 0)
        return s

    def dicts(data: List[Dict[str, Any]]) -> int:
        s = 0
        for r in data:
            s += r["year"] + len(r["make"]) + (r["msrp"] or 0)
        return s

    def structs() -> int:
        s = 0
        for r in dec_struct.decode(body).data:
            s += r.year + len(r.make) + (r.msrp or 0)
        return s

    return {
        OURS: ours,
        "json.loads dicts": lambda: dicts(json.loads(body)["data"]),
        "orjson.loads dicts": lambda: dicts(orjson.loads(body)["data"]),
        "msgspec dicts": lambda: dicts(dec_dict.decode(body)["data"]),
        "msgspec Structs (3 fields)": structs,
    }


_BODIES: Dict[str, bytes] = {}


def ours_file(payload_file: str) -> int:
    """Ours on a saved payload (for the profile)."""
    from pathlib import Path

    from vehicledata import _core
    from vehicledata.pager import records_of

    body = _BODIES.get(payload_file) or _BODIES.setdefault(payload_file, Path(payload_file).read_bytes())
    s = 0
    for r in records_of(_core.client.decode(body, "trim", "envelope", "")):
        s += r.year + len(r.make) + (r.msrp or 0)
    return s


def instr_cases(payload_file: str, calls: int) -> List[Any]:
    """The callgrind cases (harness.instructions_per_call): every contender, `calls` calls each."""
    from pathlib import Path

    return [(name, fn, calls) for name, fn in contenders(Path(payload_file).read_bytes()).items()]


def run(ctx: harness.Context) -> List[harness.Result]:
    size = 100 if ctx.quick else 1000
    path = f"/api/trims/v2?limit={size}"
    body = ctx.payload(path)
    fns = contenders(body)
    first = {k: f() for k, f in fns.items()}
    msrp_as_float = isinstance(json.loads(body)["data"][0].get("msrp"), str)
    if not msrp_as_float:
        assert len(set(first.values())) == 1, f"every contender reads the same values: {first}"
    with harness.whole_process_on(harness.cores()[:1]):  # one core for every contender
        samples = ctx.interleave(fns, number=max(1, 5000 // size) if not ctx.quick else 2)
    res = harness.Result(name=f"records-{size}", title=f"Page -> records, 3 fields read: {size} records",
                         unit="s", ours=OURS, samples=samples,
                         targets=[harness.Target("no slower than orjson.loads dicts (ratio >= 1)", "faster", 1.0,
                                                 peer="orjson.loads dicts")])
    pfile = str(ctx.payload_file(path))
    res.instructions = ctx.instructions("decode_records", "instr_cases", pfile, max(5, 2000 // size)) or {}
    if not all(c["met"] for c in res.to_json()["checks"]):
        res.notes.append("target missed; py-spy profile of ours (leaf functions, share of samples): "
                         + "".join("\n  - " + ln for ln in ctx.profile("decode_records", "ours_file", pfile,
                                                                  seconds=2 if ctx.quick else 4)))
    return [res]


if __name__ == "__main__":
    sys.exit(harness.main(run))
