"""One running host: the servers it should run, their connections, the surface, reload and status.

`core.Session` is the running host (it imports the `mcp` SDK); `servers` decides which servers a
session runs and imports nothing heavy, so `hermes mcp list` can use it and stay fast.
"""
