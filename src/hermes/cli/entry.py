"""The `hermes` command's entry point (and `python -m hermes`'s): hermes's Ctrl-C handler
(`hermes.sigint`), the collector's pace for a command's start and end (`hermes.collection`), then
the command line itself."""

from __future__ import annotations

from hermes import collection, sigint


def main() -> None:
    sigint.watch()
    collection.starting()
    try:
        try:
            from hermes.cli.main import main as run_command
        except KeyboardInterrupt as stop:  # Ctrl-C while the command line itself loads: no traceback for it
            raise SystemExit(sigint.exit_code(stop)) from None
        run_command()
    finally:
        collection.leaving()
