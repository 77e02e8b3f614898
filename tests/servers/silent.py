"""A stdio 'server' that prints one stderr line at once and never answers (no SDK import: it starts fast).

With --exit N it exits with code N right after the line instead of hanging.
"""

import sys

print("silent server starting", file=sys.stderr, flush=True)
if len(sys.argv) > 2 and sys.argv[1] == "--exit":
    sys.exit(int(sys.argv[2]))
for _ in sys.stdin:
    pass
