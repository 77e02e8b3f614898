"""How upstream names appear through `serve`: `mcp__<server>__<name>`, or as they are (`--no-prefix`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from hermes.security.invisible import visible
from hermes.tools.naming import registered_name
from hermes.tools.surface import Surface, SurfaceTool


@dataclass
class Naming:
    prefix: bool = True
    _exposed: tuple[Surface, dict[str, SurfaceTool]] | None = field(default=None, repr=False)

    def exposed(self, server: str, name: str) -> str:
        """With a prefix, the registered name; without, the server's own name minus hidden characters
        (calls map back to the name the server spelled)."""
        return registered_name(server, name) if self.prefix else visible(name)

    def tools(self, surface: Surface) -> dict[str, SurfaceTool]:
        """Exposed name -> tool; hermes's resource and prompt utility tools are left out, since
        resources and prompts are offered as themselves. Built once per surface, not per request."""
        if self._exposed is None or self._exposed[0] is not surface:
            self._exposed = (surface, {self.exposed(t.server, t.original): t for t in surface.tools.values()
                                       if t.kind == "tool"})
        return self._exposed[1]
