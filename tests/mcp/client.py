#!/usr/bin/env python3
"""A real MCP client for the mcp-proxy tests: the official Python SDK, unmodified.

The tests drive `hooks mcp-proxy` (or a server directly) with this script to
see a call's result the way an ordinary MCP client sees it, after the SDK's
own checks: `ClientSession.call_tool` validates `structuredContent` against
the tool's `outputSchema` (learnt from `tools/list`) and raises when it is
missing or does not match. `client.mjs` does the same with the TypeScript
SDK and prints the same lines.

Usage:
    client.py stdio [--timeout S] [--elicited FILE] [--protocol P] [--server-info FILE] [--lists] -- <command> <args...>
    client.py http <url> [--token T] [--timeout S] [--elicited FILE] [--protocol P] [--server-info FILE] [--lists]

Standard input: a JSON array of calls, [{"tool": name, "args": {...}}, ...].
The script connects (initialize), lists the tools once (so the SDK knows the
output schemas), then makes the calls one by one and prints one JSON line per
call, in order:

    {"ok": {"content": [...], "isError": <bool>, "structuredContent": <value or null>}}
    {"error": "<exception type>: <message>"}

Each line is compact JSON with every object's keys sorted and integral numbers
written without a fraction (1.0 as 1), byte for byte what client.mjs prints for
the same result; the exception type is the SDK's own (`RuntimeError`,
`MCPError` here, `McpError` there).

Exit status 0 once every call has printed its line (failed calls included);
2 for a usage error or bad input; 1 when the connection itself fails (the
server does not start, the handshake or the tool listing fails), with the
reason on stderr. A stdio server gets this process's whole environment and
its stderr; `--token T` sends `Authorization: Bearer T` with every HTTP
request. `--timeout` bounds each request, in seconds (default 60, as the
TypeScript SDK's default). `--elicited FILE` makes the client take
elicitations (form and URL mode): each one the server sends is appended to
FILE as a JSON line (`mode`, `message`, `url`, `elicitationId`) and answered
"accept" at once, as a client whose own hooks auto-accept would.

`--server-info FILE` writes how the server introduced itself, as the SDK
read it, to FILE: one JSON object with `name`, `title`, `version` and
`instructions`. `--lists` asks, after the calls, for the server's prompts
and resource templates, and prints a line for each:
`{"list": "<method>", "ok": <count>}` or `{"list": "<method>", "error": "..."}`.

`--protocol` picks the protocol revision. `2025-11-25` (the default) opens a
session with `initialize` (`ClientSession`). `2026-07-28` uses the SDK's
`Client` in its default `auto` mode: it asks `server/discover`, sends every
request with its own `_meta`, and answers a call's input requests (the
multi-round-trip requests of that revision: an `input_required` result, the
client's answers, the call retried with them and the server's
`requestState`) itself. The connection fails (exit 1) when the server does
not end up on 2026-07-28.

Requires the pinned SDK: `pip install -r tests/mcp/requirements.txt`.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import AsyncExitStack
from typing import Any

import anyio

from mcp import Client, ClientSession, StdioServerParameters, stdio_client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

PROTOCOLS = ("2025-11-25", "2026-07-28")

USAGE = (
    "usage: client.py stdio [--timeout S] [--elicited FILE] [--protocol P] [--server-info FILE] [--lists] -- <command> <args...>\n"
    "       client.py http <url> [--token T] [--timeout S] [--elicited FILE] [--protocol P] [--server-info FILE] [--lists]\n"
    'stdin: [{"tool": name, "args": {...}}, ...]'
)


class UsageError(Exception):
    pass


class ConnectionFailed(Exception):
    pass


def parse_argv(argv: list[str]) -> dict[str, Any]:
    if not argv or argv[0] not in ("stdio", "http"):
        raise UsageError("the first argument must be `stdio` or `http`")
    mode, rest = argv[0], argv[1:]
    opts: dict[str, Any] = {
        "mode": mode,
        "timeout": 60.0,
        "token": None,
        "url": None,
        "command": None,
        "elicited": None,
        "protocol": PROTOCOLS[0],
        "server_info": None,
        "lists": False,
    }
    i = 0
    while i < len(rest):
        arg = rest[i]
        if mode == "stdio" and arg == "--":
            opts["command"] = rest[i + 1 :]
            break
        if arg == "--lists":
            opts["lists"] = True
            i += 1
            continue
        if arg in ("--timeout", "--token", "--elicited", "--protocol", "--server-info"):
            if i + 1 >= len(rest):
                raise UsageError(f"{arg} needs a value")
            value = rest[i + 1]
            if arg == "--timeout":
                try:
                    opts["timeout"] = float(value)
                except ValueError:
                    raise UsageError(f"--timeout needs a number of seconds, not {value!r}") from None
            elif arg == "--elicited":
                opts["elicited"] = value
            elif arg == "--server-info":
                opts["server_info"] = value
            elif arg == "--protocol":
                if value not in PROTOCOLS:
                    raise UsageError(f"--protocol must be one of {', '.join(PROTOCOLS)}, not {value!r}")
                opts["protocol"] = value
            elif mode == "http":
                opts["token"] = value
            else:
                raise UsageError("--token is for `http` only")
            i += 2
            continue
        if mode == "http" and opts["url"] is None and not arg.startswith("--"):
            opts["url"] = arg
            i += 1
            continue
        raise UsageError(f"unexpected argument {arg!r}")
    if mode == "stdio" and not opts["command"]:
        raise UsageError("`stdio` needs `-- <command> <args...>`")
    if mode == "http" and opts["url"] is None:
        raise UsageError("`http` needs a URL")
    return opts


def read_calls() -> list[dict[str, Any]]:
    try:
        calls = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        raise UsageError(f"stdin is not JSON: {e}") from None
    if not isinstance(calls, list):
        raise UsageError("stdin must be a JSON array of calls")
    for n, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
            raise UsageError(f"call {n}: needs a string `tool`")
        if not isinstance(call.get("args", {}), dict):
            raise UsageError(f"call {n}: `args` must be an object")
    return calls


def js_numbers(value: Any) -> Any:
    """Integral floats as ints (1.0 -> 1), as JavaScript prints them, so both drivers print the same bytes."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [js_numbers(v) for v in value]
    if isinstance(value, dict):
        return {k: js_numbers(v) for k, v in value.items()}
    return value


def emit(line: dict[str, Any]) -> None:
    # Compact, keys sorted, non-ASCII kept, integral floats as ints: the same bytes as client.mjs
    # prints, whichever order each SDK keeps an object's keys in.
    text = json.dumps(js_numbers(line), ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def result_json(result: Any) -> dict[str, Any]:
    """The CallToolResult as the SDK parsed it: its content blocks, structuredContent, isError."""
    return {
        "content": [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content],
        "structuredContent": result.structured_content,
        "isError": bool(result.is_error),
    }


def describe(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


async def transport_of(stack: AsyncExitStack, opts: dict[str, Any]) -> Any:
    """What the SDK connects through: a stdio server's parameters, or an HTTP transport."""
    if opts["mode"] == "stdio":
        command = opts["command"]
        return StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    headers = {"Authorization": f"Bearer {opts['token']}"} if opts["token"] is not None else None
    http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
    return streamable_http_client(opts["url"], http_client=http)


def elicitation_callback(opts: dict[str, Any]) -> Any:
    """With --elicited: writes each elicitation to the file and accepts it at once."""
    if opts["elicited"] is None:
        return None
    path = opts["elicited"]

    async def callback(_context: Any, params: Any) -> types.ElicitResult:
        seen = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        line = {key: seen.get(key) for key in ("mode", "message", "url", "elicitationId")}
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line, sort_keys=True) + "\n")
        return types.ElicitResult(action="accept")

    return callback


def write_server_info(opts: dict[str, Any], info: Any, instructions: str | None) -> None:
    """With --server-info: how the server introduced itself, to the file."""
    if opts["server_info"] is None:
        return
    shown = {
        "name": getattr(info, "name", None),
        "title": getattr(info, "title", None),
        "version": getattr(info, "version", None),
        "instructions": instructions,
    }
    with open(opts["server_info"], "w", encoding="utf-8") as out:
        json.dump(shown, out, sort_keys=True)


async def open_session(stack: AsyncExitStack, opts: dict[str, Any]) -> Any:
    """A connected client with the tools listed: something with `call_tool(name, args)`."""
    callback = elicitation_callback(opts)
    if opts["protocol"] == "2026-07-28":
        client = await stack.enter_async_context(
            Client(
                await transport_of(stack, opts),
                read_timeout_seconds=opts["timeout"],
                elicitation_callback=callback,
            )
        )
        if client.protocol_version != "2026-07-28":
            raise RuntimeError(f"the server answered on protocol {client.protocol_version}, not 2026-07-28")
        write_server_info(opts, client.server_info, client.instructions)
        await client.list_tools()
        return client
    transport = await transport_of(stack, opts)
    if isinstance(transport, StdioServerParameters):
        read, write = await stack.enter_async_context(stdio_client(transport))
    else:
        read, write = await stack.enter_async_context(transport)
    session = await stack.enter_async_context(
        ClientSession(read, write, read_timeout_seconds=opts["timeout"], elicitation_callback=callback)
    )
    introduced = await session.initialize()
    write_server_info(opts, introduced.server_info, introduced.instructions)
    # Lists the tools so call_tool knows their output schemas (it would list them
    # itself on the first call of an unknown tool; this makes it explicit).
    await session.list_tools()
    return session


async def run(opts: dict[str, Any], calls: list[dict[str, Any]]) -> None:
    async with AsyncExitStack() as stack:
        try:
            session = await open_session(stack, opts)
        except Exception as e:  # noqa: BLE001 - any failure to connect is reported the same way
            raise ConnectionFailed(describe(e)) from e
        for call in calls:
            try:
                result = await session.call_tool(call["tool"], call.get("args", {}))
            except Exception as e:  # noqa: BLE001 - the line reports whatever the SDK raised
                emit({"error": describe(e)})
            else:
                emit({"ok": result_json(result)})
        if opts["lists"]:
            for method, ask in (
                ("prompts/list", session.list_prompts),
                ("resources/templates/list", session.list_resource_templates),
            ):
                try:
                    listed = await ask()
                except Exception as e:  # noqa: BLE001 - the line reports whatever the SDK raised
                    emit({"list": method, "error": describe(e)})
                else:
                    items = getattr(listed, "prompts", None) or getattr(listed, "resource_templates", None) or []
                    emit({"list": method, "ok": len(items)})


def main() -> int:
    try:
        opts = parse_argv(sys.argv[1:])
        calls = read_calls()
    except UsageError as e:
        print(f"client.py: {e}\n{USAGE}", file=sys.stderr)
        return 2
    try:
        anyio.run(run, opts, calls)
    except ConnectionFailed as e:
        print(f"client.py: the connection failed: {e}", file=sys.stderr)
        return 1
    except BaseExceptionGroup as group:  # noqa: F821 - builtin on 3.11+
        # A transport's task group may wrap the failure; report its leaves.
        leaves = []
        stack: list[BaseException] = [group]
        while stack:
            exc = stack.pop()
            if isinstance(exc, BaseExceptionGroup):  # noqa: F821
                stack.extend(exc.exceptions)
            else:
                leaves.append(describe(exc.__cause__ if isinstance(exc, ConnectionFailed) and exc.__cause__ else exc))
        print(f"client.py: the connection failed: {'; '.join(leaves)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
