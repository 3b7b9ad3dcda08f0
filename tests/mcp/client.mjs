#!/usr/bin/env node
// A real MCP client for the mcp-proxy tests: the official TypeScript SDK's
// Client, unmodified.
//
// The tests drive `hooks mcp-proxy` (or a server directly) with this script to
// see a call's result the way an ordinary MCP client sees it, after the SDK's
// own checks: `Client.callTool` validates `structuredContent` against the
// tool's `outputSchema` (learnt from `listTools`, with Ajv) and throws when it
// is missing or does not match. `client.py` does the same with the Python SDK
// and prints the same lines.
//
// Usage:
//   node client.mjs stdio [--timeout S] -- <command> <args...>
//   node client.mjs http <url> [--token T] [--timeout S]
//
// Standard input: a JSON array of calls, [{"tool": name, "args": {...}}, ...].
// The script connects (initialize), lists the tools once (so the SDK knows the
// output schemas: without a listTools the TypeScript Client validates
// nothing), then makes the calls one by one and prints one JSON line per call,
// in order:
//
//   {"ok": {"content": [...], "isError": <bool>, "structuredContent": <value or null>}}
//   {"error": "<exception type>: <message>"}
//
// Each line is compact JSON with every object's keys sorted, byte for byte
// what client.py prints for the same result; the exception type is the SDK's
// own (`McpError` here, `RuntimeError`, `MCPError` there).
//
// Exit status 0 once every call has printed its line (failed calls included);
// 2 for a usage error or bad input; 1 when the connection itself fails (the
// server does not start, the handshake or the tool listing fails), with the
// reason on stderr. A stdio server gets this process's whole environment and
// its stderr; `--token T` sends `Authorization: Bearer T` with every HTTP
// request. `--timeout` bounds each request, in seconds (default 60, the SDK's
// default).
//
// Requires the pinned SDK: `npm ci --prefix tests/mcp`.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const USAGE =
  "usage: client.mjs stdio [--timeout S] -- <command> <args...>\n" +
  "       client.mjs http <url> [--token T] [--timeout S]\n" +
  'stdin: [{"tool": name, "args": {...}}, ...]';

class UsageError extends Error {}

function parseArgv(argv) {
  if (argv.length === 0 || !["stdio", "http"].includes(argv[0])) {
    throw new UsageError("the first argument must be `stdio` or `http`");
  }
  const mode = argv[0];
  const rest = argv.slice(1);
  const opts = { mode, timeout: 60, token: null, url: null, command: null };
  let i = 0;
  while (i < rest.length) {
    const arg = rest[i];
    if (mode === "stdio" && arg === "--") {
      opts.command = rest.slice(i + 1);
      break;
    }
    if (arg === "--timeout" || arg === "--token") {
      if (i + 1 >= rest.length) throw new UsageError(`${arg} needs a value`);
      const value = rest[i + 1];
      if (arg === "--timeout") {
        const seconds = Number(value);
        if (value.trim() === "" || !Number.isFinite(seconds)) {
          throw new UsageError(`--timeout needs a number of seconds, not '${value}'`);
        }
        opts.timeout = seconds;
      } else if (mode === "http") {
        opts.token = value;
      } else {
        throw new UsageError("--token is for `http` only");
      }
      i += 2;
      continue;
    }
    if (mode === "http" && opts.url === null && !arg.startsWith("--")) {
      opts.url = arg;
      i += 1;
      continue;
    }
    throw new UsageError(`unexpected argument '${arg}'`);
  }
  if (mode === "stdio" && (!opts.command || opts.command.length === 0)) {
    throw new UsageError("`stdio` needs `-- <command> <args...>`");
  }
  if (mode === "http" && opts.url === null) throw new UsageError("`http` needs a URL");
  return opts;
}

async function readCalls() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  let calls;
  try {
    calls = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch (e) {
    throw new UsageError(`stdin is not JSON: ${e.message}`);
  }
  if (!Array.isArray(calls)) throw new UsageError("stdin must be a JSON array of calls");
  calls.forEach((call, n) => {
    if (call === null || typeof call !== "object" || Array.isArray(call) || typeof call.tool !== "string") {
      throw new UsageError(`call ${n}: needs a string \`tool\``);
    }
    const args = call.args ?? {};
    if (args === null || typeof args !== "object" || Array.isArray(args)) {
      throw new UsageError(`call ${n}: \`args\` must be an object`);
    }
  });
  return calls;
}

// Every object's keys sorted, so the line does not depend on the order the SDK keeps them in.
function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    const sorted = {};
    for (const key of Object.keys(value).sort()) sorted[key] = sortKeys(value[key]);
    return sorted;
  }
  return value;
}

// Compact, keys sorted: the same bytes as client.py prints.
function emit(line) {
  process.stdout.write(JSON.stringify(sortKeys(line)) + "\n");
}

// The CallToolResult as the SDK parsed it: its content blocks, structuredContent, isError.
function resultJson(result) {
  return {
    content: result.content ?? [],
    structuredContent: result.structuredContent ?? null,
    isError: Boolean(result.isError),
  };
}

function describe(e) {
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return `${typeof e}: ${String(e)}`;
}

function makeTransport(opts) {
  if (opts.mode === "stdio") {
    const [command, ...args] = opts.command;
    return new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
  }
  const headers = opts.token !== null ? { Authorization: `Bearer ${opts.token}` } : {};
  return new StreamableHTTPClientTransport(new URL(opts.url), { requestInit: { headers } });
}

async function main() {
  let opts;
  let calls;
  try {
    opts = parseArgv(process.argv.slice(2));
    calls = await readCalls();
  } catch (e) {
    if (e instanceof UsageError) {
      process.stderr.write(`client.mjs: ${e.message}\n${USAGE}\n`);
      return 2;
    }
    throw e;
  }
  const requestOptions = { timeout: opts.timeout * 1000 };
  const client = new Client({ name: "hooks-mcp-proxy-tests", version: "0" });
  try {
    await client.connect(makeTransport(opts), requestOptions);
    // Lists the tools so callTool knows their output schemas.
    await client.listTools(undefined, requestOptions);
  } catch (e) {
    process.stderr.write(`client.mjs: the connection failed: ${describe(e)}\n`);
    await client.close().catch(() => {});
    return 1;
  }
  for (const call of calls) {
    try {
      const result = await client.callTool({ name: call.tool, arguments: call.args ?? {} }, undefined, requestOptions);
      emit({ ok: resultJson(result) });
    } catch (e) {
      emit({ error: describe(e) });
    }
  }
  await client.close();
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`client.mjs: ${describe(e)}\n`);
    process.exitCode = 1;
  },
);
