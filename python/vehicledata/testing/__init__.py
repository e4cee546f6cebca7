"""Test helpers: the local emulator launcher and a pytest plugin.

>>> from vehicledata.testing import Emulator, DEMO_ACCOUNTS
>>> with Emulator() as emu:                       # doctest: +SKIP
...     url = emu.url
"""
from .emulator import DEMO_ACCOUNTS, Emulator, EmulatorError, emulator_defaults, find_executable

__all__ = ["DEMO_ACCOUNTS", "Emulator", "EmulatorError", "emulator_defaults", "find_executable"]
