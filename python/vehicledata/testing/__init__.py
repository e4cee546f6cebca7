"""Test helpers: the local emulator launcher, a pytest plugin, and recorded answers served in
process (docs/testing.md).

>>> from vehicledata.testing import Emulator, DEMO_ACCOUNTS
>>> with Emulator() as emu:                       # doctest: +SKIP
...     url = emu.url
>>> from vehicledata.testing import ReplayServer
>>> with ReplayServer("tests/data/replay_makes.jsonl") as server:   # doctest: +SKIP
...     url = server.url                          # no dataset, no emulator
"""
from .emulator import DEMO_ACCOUNTS, Emulator, EmulatorError, emulator_defaults, find_executable
from .replay import (Answer, Recorder, ReplayServer, SeenRequest, UnexpectedRequestError, load_answers,
                     save_answers)

__all__ = ["DEMO_ACCOUNTS", "Emulator", "EmulatorError", "emulator_defaults", "find_executable",
           "Answer", "Recorder", "ReplayServer", "SeenRequest", "UnexpectedRequestError", "load_answers",
           "save_answers"]
