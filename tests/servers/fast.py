"""A stdio MCP server written against the protocol itself, with the standard library only.

Why it exists: importing the SDK costs a test server about 1.5 s of CPU on a small machine, and
tests that restart servers many times (crash budgets, reloads, parallel starts, the CLI) would
spend most of their time there. This one starts in milliseconds. It also keeps hermes honest
about servers that were not built with the Python SDK (most third-party servers are not).

Tools: echo, get-weather, fail, crash, slow (records cancellation), whoami, env-report; with
--lean: ping, a.b and a-b (two names that collide once sanitized); --long adds a tool whose name
is longer than a registered name may be; --hostile adds a tool whose name, description
and log line carry markup; --env-digest adds env-digest (a variable's SHA-256, as toolbox.py's).
Options as toolbox.py: --stderr-secret, --ready-delay S, --exit-at-start N, --stderr-flood MB.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time

PROTOCOL = "2025-06-18"
args = sys.argv[1:]


def option(name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


LEAN = "--lean" in args
lock = threading.Lock()
cancelled: dict[object, threading.Event] = {}


def send(message: dict[str, object]) -> None:
    line = json.dumps(message) + "\n"
    with lock:
        sys.stdout.write(line)
        sys.stdout.flush()


def text(value: str, error: bool = False) -> dict[str, object]:
    return {"content": [{"type": "text", "text": value}], "isError": error}


# Tools that change nothing say so, as a careful server does: a host may run them without asking.
READ_ONLY = {"ping", "echo", "get-weather", "fail", "slow", "whoami", "env-report", "log", "rendezvous", "unreadable",
             "reveal", "endless-task", "add", "env-digest"}


def tool(name: str, description: str, **properties: str) -> dict[str, object]:
    definition: dict[str, object] = {
        "name": name, "description": description,
        "inputSchema": {"type": "object", "properties": {k: {"type": v} for k, v in properties.items()},
                        "required": [k for k in properties if k != "marker"]}}
    if name in READ_ONLY:
        definition["annotations"] = {"readOnlyHint": True}
    return definition


TOOLS = [tool("ping", "Answer pong."), tool("a.b", "Collides with a-b."), tool("a-b", "Collides with a.b.")] if LEAN \
    else [tool("echo", "Return the text unchanged.", text="string"),
          tool("get-weather", "A tool whose name has a hyphen.", city="string"),
          tool("fail", "Fail with a message that contains the given text.", text="string"),
          tool("crash", "Exit the server process at once."),
          tool("slow", "Sleep, then answer; records cancellation.", seconds="number", marker="string"),
          tool("whoami", "Report this process id."),
          tool("env-report", "Names of every environment variable."),
          tool("log", "Send the text as a log message, then answer.", text="string"),
          {**tool("endless-task", "A task that never ends; its cancellation is written to the marker file.",
                  marker="string"), "execution": {"taskSupport": "required"}},
          tool("rendezvous", "Wait for a second call of this tool; answer 'met' when both ran at once."),
          tool("unreadable", "Answer with JSON nested far too deeply to read."),
          tool("reveal", "Answer with the value of the environment variable named.", variable="string"),
          tool("add", "Add two integers and return the sum.", a="integer", b="integer"),
          {**tool("delete", "Pretend to delete something.", what="string"),
           "annotations": {"destructiveHint": True, "readOnlyHint": False}}]
MEETING = threading.Barrier(2)
if option("--describe-env"):  # a server that echoes what it was started with into its definitions
    TOOLS[0] = {**TOOLS[0], "description": f"Echo; started with {os.environ.get(str(option('--describe-env')))}"}
# A server that puts markup where a page shows text: a tool's name and description, and its log.
HOSTILE_NAME = 'x"><script>alert(1)</script>'
HOSTILE_DESCRIPTION = "<img src=x onerror=alert(2)><script>alert(3)</script> Read a note."
if "--hostile" in args:
    TOOLS.append(tool(HOSTILE_NAME, HOSTILE_DESCRIPTION))
    print("<script>alert(4)</script> in the log", file=sys.stderr, flush=True)
LONG_NAME = "a-tool-whose-name-is-far-too-long-to-be-registered-without-being-cut-short"
if "--long" in args:
    TOOLS.append(tool(LONG_NAME, "A tool with a long name."))
if "--env-digest" in args:  # which credential reached this process, without showing it
    TOOLS.append({**tool("env-digest", "The SHA-256 of an environment variable's value, or 'unset'."),
                  "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}})


def call(request_id: object, name: str, arguments: dict[str, object]) -> dict[str, object]:
    if name == "add":
        try:
            return text(str(int(arguments.get("a", 0)) + int(arguments.get("b", 0))))
        except (TypeError, ValueError):
            return text("add takes two integers", error=True)
    if name == "echo":
        return text(str(arguments.get("text", "")))
    if name == "get-weather":
        return text(f"sunny in {arguments.get('city')}")
    if name == "fail":
        return text(f"failure while using {arguments.get('text')}", error=True)
    if name == "crash":
        os._exit(3)
    if name == "slow":
        event = cancelled.setdefault(request_id, threading.Event())
        if event.wait(float(str(arguments.get("seconds", 1)))):
            marker = arguments.get("marker")
            if marker:
                with open(str(marker), "w") as handle:
                    handle.write("cancelled")
        return text("done")
    if name == "whoami":
        return {**text(str(os.getpid())), "structuredContent": {"pid": os.getpid()}}
    if name == "env-report":
        return {**text(" ".join(sorted(os.environ))), "structuredContent": {"names": sorted(os.environ)}}
    if name == "unreadable":
        sys.stdout.write('{"jsonrpc": "2.0", "id": ' + json.dumps(request_id) + ', "result": ' + "[" * 100_000
                         + "]" * 100_000 + "}\n")
        sys.stdout.flush()
        return text("never read")
    if name == "rendezvous":
        try:
            MEETING.wait(timeout=120)  # only a hermes that runs one call at a time ever waits this long
        except threading.BrokenBarrierError:
            return text("alone")
        return text("met")
    if name == "reveal":
        return text(f"the value is {os.environ.get(str(arguments.get('variable')), '(unset)')}")
    if name == "delete":
        return text(f"deleted {arguments.get('what')}")
    if name == "log":
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "warning", "logger": "fast", "data": {"said": arguments.get("text")}}})
        return text("logged")
    if name == "env-digest":
        value = os.environ.get(str(arguments.get("name")))
        return text("unset" if value is None else hashlib.sha256(value.encode()).hexdigest())
    if name == LONG_NAME:
        return text("long answer")
    if name == "ping":
        return text("pong")
    return text(f"no tool {name}", error=True)


TASKS: dict[str, str] = {}  # task id -> the marker file its cancellation is written to


def task_state(task_id: str, status: str) -> dict[str, object]:
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"taskId": task_id, "status": status, "createdAt": now, "lastUpdatedAt": now, "ttl": 60000,
            "pollInterval": 100, "statusMessage": "still going"}


def answer(message: dict[str, object]) -> None:
    method, request_id = message.get("method"), message.get("id")
    params = message.get("params") if isinstance(message.get("params"), dict) else {}
    assert isinstance(params, dict)
    if method == "initialize":
        result: dict[str, object] = {"protocolVersion": params.get("protocolVersion", PROTOCOL),
                                     "capabilities": {"tools": {"listChanged": False},
                                                      "tasks": {"cancel": {}, "requests": {"tools": {"call": {}}}}},
                                     "serverInfo": {"name": "fast", "version": "1.0"}}
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call" and params.get("name") == "endless-task" and "task" in params:
        task_id = f"task-{len(TASKS) + 1}"
        arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        TASKS[task_id] = str(arguments.get("marker", ""))  # type: ignore[union-attr]
        result = {"task": task_state(task_id, "working")}
    elif method == "tools/call":
        # Every call that reached the server, one name per line, in `calls.txt` of this folder (a
        # folder: a file named in a server's arguments is shared read-only, as its code would be).
        trace = option("--calls")
        if trace:
            with open(os.path.join(trace, "calls.txt"), "a") as handle:
                handle.write(f"{params.get('name')}\n")
        arguments = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        assert isinstance(arguments, dict)
        result = call(request_id, str(params.get("name")), arguments)
    elif method == "tasks/get":
        result = task_state(str(params.get("taskId")), "working")
    elif method == "tasks/cancel":
        marker = TASKS.get(str(params.get("taskId")))
        if marker:
            with open(marker, "w") as handle:
                handle.write("cancelled")
        result = task_state(str(params.get("taskId")), "cancelled")
    elif method == "ping":
        result = {}
    else:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": f"no method {method}"}})
        return
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def main() -> None:
    if "--stderr-secret" in args:
        print(f"starting with key {os.environ.get('FAKE_API_KEY')}", file=sys.stderr, flush=True)
    print("fast server starting", file=sys.stderr, flush=True)
    if option("--stderr-flood") is not None:  # megabytes of log lines before serving (a hostile server)
        line = "flood " + "x" * 1000 + "\n"
        for _ in range(int(float(str(option("--stderr-flood"))) * 1024)):
            sys.stderr.write(line)
        sys.stderr.flush()
        print("flood done", file=sys.stderr, flush=True)
    if option("--exit-at-start") is not None:
        sys.exit(int(str(option("--exit-at-start"))))
    if option("--ready-delay"):
        time.sleep(float(str(option("--ready-delay"))))
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict):
            continue
        if message.get("method") == "notifications/cancelled":
            params = message.get("params") or {}
            cancelled.setdefault(params.get("requestId"), threading.Event()).set()
        elif "id" in message and "method" in message:
            threading.Thread(target=answer, args=(message,), daemon=True).start()


if __name__ == "__main__":
    main()
