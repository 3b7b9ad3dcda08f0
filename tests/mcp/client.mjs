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
//   node client.mjs stdio [--timeout S] [--elicited FILE] [--protocol P] [--server-info FILE] [--lists] -- <command> <args...>
//   node client.mjs http <url> [--token T] [--timeout S] [--elicited FILE] [--protocol P] [--server-info FILE] [--lists]
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
// default). `--elicited FILE` makes the client take elicitations (form and URL
// mode): each one the server sends is appended to FILE as a JSON line (`mode`,
// `message`, `url`, `elicitationId`) and answered "accept" at once, as a
// client whose own hooks auto-accept would. `--server-info FILE` writes how the
// server introduced itself, as the SDK read it, to FILE: one JSON object with
// `name`, `title`, `version` and `instructions`. `--lists` asks, after the
// calls, for the server's prompts and resource templates, and prints a line for
// each: {"list": "<method>", "ok": <count>} or {"list": "<method>", "error": "..."}.
//
// Without `--protocol` the client is the SDK's 1.x package
// (`@modelcontextprotocol/sdk`), which speaks 2025-11-25 and earlier. With it,
// the client is the SDK's 2.x client package (`@modelcontextprotocol/client`):
// `--protocol 2025-11-25` in its default `legacy` mode (`initialize`),
// `--protocol 2026-07-28` in its `auto` mode (it asks `server/discover`,
// sends every request with its own `_meta`, and answers a call's input
// requests itself: an `input_required` result, the client's answers, the
// call retried with them and the server's `requestState`). The connection
// fails (exit 1) when the server does not end up on the revision asked for.
//
// Requires the pinned SDK: `npm ci --prefix tests/mcp`.

import { appendFileSync, writeFileSync } from "node:fs";

import * as v2 from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const PROTOCOLS = ["2025-11-25", "2026-07-28"];

const USAGE =
  "usage: client.mjs stdio [--timeout S] [--elicited FILE] [--protocol P] [--server-info FILE] [--lists] -- <command> <args...>\n" +
  "       client.mjs http <url> [--token T] [--timeout S] [--elicited FILE] [--protocol P] [--server-info FILE] [--lists]\n" +
  'stdin: [{"tool": name, "args": {...}}, ...]';

class UsageError extends Error {}

function parseArgv(argv) {
  if (argv.length === 0 || !["stdio", "http"].includes(argv[0])) {
    throw new UsageError("the first argument must be `stdio` or `http`");
  }
  const mode = argv[0];
  const rest = argv.slice(1);
  const opts = { mode, timeout: 60, token: null, url: null, command: null, elicited: null, protocol: null, serverInfo: null, lists: false };
  let i = 0;
  while (i < rest.length) {
    const arg = rest[i];
    if (mode === "stdio" && arg === "--") {
      opts.command = rest.slice(i + 1);
      break;
    }
    if (arg === "--lists") {
      opts.lists = true;
      i += 1;
      continue;
    }
    if (["--timeout", "--token", "--elicited", "--protocol", "--server-info"].includes(arg)) {
      if (i + 1 >= rest.length) throw new UsageError(`${arg} needs a value`);
      const value = rest[i + 1];
      if (arg === "--timeout") {
        const seconds = Number(value);
        if (value.trim() === "" || !Number.isFinite(seconds)) {
          throw new UsageError(`--timeout needs a number of seconds, not '${value}'`);
        }
        opts.timeout = seconds;
      } else if (arg === "--elicited") {
        opts.elicited = value;
      } else if (arg === "--server-info") {
        opts.serverInfo = value;
      } else if (arg === "--protocol") {
        if (!PROTOCOLS.includes(value)) {
          throw new UsageError(`--protocol must be one of ${PROTOCOLS.join(", ")}, not '${value}'`);
        }
        opts.protocol = value;
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

function makeTransport(opts, sdk) {
  if (opts.mode === "stdio") {
    const [command, ...args] = opts.command;
    const Stdio = sdk === "v2" ? StdioV2 : StdioClientTransport;
    return new Stdio({ command, args, env: { ...process.env }, stderr: "inherit" });
  }
  const headers = opts.token !== null ? { Authorization: `Bearer ${opts.token}` } : {};
  const Http = sdk === "v2" ? v2.StreamableHTTPClientTransport : StreamableHTTPClientTransport;
  return new Http(new URL(opts.url), { requestInit: { headers } });
}

// With --elicited: writes the elicitation to the file and accepts it at once.
function elicitationHandler(path) {
  return async (request) => {
    const params = request.params ?? {};
    const line = {};
    for (const key of ["elicitationId", "message", "mode", "url"]) line[key] = params[key] ?? null;
    appendFileSync(path, JSON.stringify(line) + "\n");
    return { action: "accept" };
  };
}

// The client, not yet connected: the 1.x package without --protocol, else the 2.x client package.
function makeClient(opts) {
  const info = { name: "hooks-mcp-proxy-tests", version: "0" };
  const capabilities = opts.elicited !== null ? { elicitation: { form: {}, url: {} } } : {};
  if (opts.protocol === null) {
    const client = new Client(info, { capabilities });
    if (opts.elicited !== null) client.setRequestHandler(ElicitRequestSchema, elicitationHandler(opts.elicited));
    return client;
  }
  const mode = opts.protocol === "2026-07-28" ? "auto" : "legacy";
  const client = new v2.Client(info, { capabilities, versionNegotiation: { mode } });
  if (opts.elicited !== null) client.setRequestHandler("elicitation/create", elicitationHandler(opts.elicited));
  return client;
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
  const client = makeClient(opts);
  try {
    await client.connect(makeTransport(opts, opts.protocol === null ? "v1" : "v2"), requestOptions);
    if (opts.protocol !== null) {
      const spoken = client.getNegotiatedProtocolVersion();
      if (spoken !== opts.protocol) {
        throw new Error(`the server answered on protocol ${spoken}, not ${opts.protocol}`);
      }
    }
    if (opts.serverInfo !== null) {
      const info = client.getServerVersion() ?? {};
      const shown = {
        instructions: client.getInstructions() ?? null,
        name: info.name ?? null,
        title: info.title ?? null,
        version: info.version ?? null,
      };
      writeFileSync(opts.serverInfo, JSON.stringify(shown));
    }
    // Lists the tools so callTool knows their output schemas.
    await client.listTools(undefined, requestOptions);
  } catch (e) {
    process.stderr.write(`client.mjs: the connection failed: ${describe(e)}\n`);
    await client.close().catch(() => {});
    return 1;
  }
  for (const call of calls) {
    try {
      const params = { name: call.tool, arguments: call.args ?? {} };
      // The 1.x package takes a result schema before the options; the 2.x one does not.
      const result =
        opts.protocol === null
          ? await client.callTool(params, undefined, requestOptions)
          : await client.callTool(params, requestOptions);
      emit({ ok: resultJson(result) });
    } catch (e) {
      emit({ error: describe(e) });
    }
  }
  if (opts.lists) {
    const lists = [
      ["prompts/list", () => client.listPrompts(undefined, requestOptions), "prompts"],
      ["resources/templates/list", () => client.listResourceTemplates(undefined, requestOptions), "resourceTemplates"],
    ];
    for (const [method, ask, key] of lists) {
      try {
        const listed = await ask();
        emit({ list: method, ok: (listed[key] ?? []).length });
      } catch (e) {
        emit({ list: method, error: describe(e) });
      }
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
