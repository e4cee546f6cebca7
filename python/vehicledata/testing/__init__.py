"""Test helpers: the local emulator launcher and a pytest plugin."""
