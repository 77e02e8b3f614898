"""Options that several commands share, defined once so they read and behave the same everywhere."""

from __future__ import annotations

import click

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
platform_option = click.option("--platform", help="Platform whose toolsets apply (see platform_toolsets: cli, "
                                                  "telegram, …).")
