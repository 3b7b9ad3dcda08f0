#!/usr/bin/env python3
"""A fake OpenAI Responses API for driving the real Codex CLI offline.

Usage:
    python3 fake_responses_api.py SCRIPT.json LOG.jsonl [PORT]

PORT defaults to 0 (the OS picks a free one). The first line written to stdout
is the port actually bound, flushed at once, so a caller can read it and then
point a Codex model provider at base_url = "http://127.0.0.1:<port>/v1"
(wire_api = "responses"). The server listens on 127.0.0.1 only, handles each
connection on its own thread, and runs until it is killed (SIGTERM / SIGINT).

Script
------
SCRIPT.json holds the model's turns, in order, either as a bare list or as
{"turns": [...]}. Each turn is one of

    {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": "echo hi"}}, ...]}
    {"text": "Some final answer."}

A tool_calls entry with "arguments" (an object, sent JSON-encoded, or a string,
sent as it is) becomes a "function_call" output item; add "namespace" for a
tool the request offers inside a {"type": "namespace"} tool, as Codex offers
MCP tools ({"namespace": "mcp__<server>", "name": "<tool>", ...}). An entry
with "input" (a string) instead becomes a "custom_tool_call" item: Codex's
freeform tools, e.g. {"name": "apply_patch", "input": "*** Begin Patch\n..."},
offered only for models Codex knows (e.g. -m gpt-5.5), not for an unknown model
name. Several entries make a parallel tool call. Every call gets a call_id
unique for the life of the server: call_fake_<n>, n counting up from 1 (Codex
hands it to hooks as tool_use_id). A text turn answers with one assistant
"message" item. Every string in the script has "{{PORT}}" replaced by the port
the server bound. An argument whose value is exactly "{{SESSION_ID}}" becomes
the number of the newest "session ID <n>" Codex reported in a tool result of
the request (for write_stdin to a command still running); null when there is
none. Once the script is used up, main requests get the text "Done." (so a run
always ends).

Log
---
Every request is appended to LOG.jsonl as one JSON line:

    {"seq": n, "method": "POST", "path": "/v1/responses", "query": "",
     "kind": "main" | "side" | "other",
     "turn": <script index answered, main requests only>,
     "headers": {...a few useful ones...},
     "body": <the parsed JSON body, or the raw text if it was not JSON>}

What the model received as each tool call's result is in the body's "input"
list: {"type": "function_call_output", "call_id": ..., "output": ...} (or
"custom_tool_call_output") items, whose "output" is a string (shell tools,
apply_patch, hook replacements) or a list of {"type": "input_text", ...}
parts (MCP results); hook additionalContext arrives as a separate
{"type": "message", "role": "developer"} item. The file is opened in append
mode and each line is written and flushed under a lock, so lines never
interleave.

Endpoints
---------
POST /v1/responses   The model. Streams server-sent events (response.created,
                     response.output_item.added / .done per item,
                     response.output_text.delta for text, response.completed
                     with usage) when the body has "stream": true, which Codex
                     always sets; a plain Response object otherwise.
GET /v1/models       A one-model list (fake-model), in both the OpenAI shape
                     ("data") and Codex's catalog shape ("models": []).
Any other GET/HEAD   200 with {}.
Any other POST       404 with the API's error shape, and logged, so a new
                     endpoint shows up in the log.
Codex 0.171.0, run by `codex exec` with a custom provider, only ever sent
POST /v1/responses (never /v1/models), uncompressed.

Which requests advance the script
---------------------------------
A request is a MAIN request iff its body has a non-empty "tools" list and the
last item of its "input" (skipping "developer"/"system" messages) is a user
message or a tool result (*_call_output). Anything else is a SIDE request
(e.g. a compaction or summary call) and gets the text "OK." without touching
the script.

The turn a main request gets is the number of runs of model-authored items
(assistant messages, reasoning, *_call items) already in its "input": the
first request of a conversation has none and gets turn 0, the request carrying
the results of turn 0's tools has one and gets turn 1, and so on. A retried
request therefore gets the same turn again instead of skipping one.
"""

import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SIDE_ANSWER = "OK."
EXHAUSTED_ANSWER = "Done."
MODEL_FALLBACK = "fake-model"
LOGGED_HEADERS = (
    "user-agent",
    "originator",
    "content-type",
    "content-encoding",
    "accept",
    "authorization",
    "session-id",
    "x-codex-turn-metadata",
)
MODEL_ITEM_TYPES = {
    "reasoning",
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "tool_search_call",
    "image_generation_call",
}
SKIPPED_ROLES = {"developer", "system"}


class State:
    def __init__(self, script_path, log_path):
        with open(script_path, encoding="utf-8") as f:
            script = json.load(f)
        if isinstance(script, dict):
            script = script.get("turns", [])
        if not isinstance(script, list):
            raise SystemExit("script must be a list of turns or {\"turns\": [...]}")
        for i, turn in enumerate(script):
            if not isinstance(turn, dict) or not ("tool_calls" in turn or "text" in turn):
                raise SystemExit(f"turn {i} must be {{\"tool_calls\": [...]}} or {{\"text\": ...}}")
            calls = turn.get("tool_calls", [])
            if not isinstance(calls, list) or not all(
                isinstance(c, dict) and isinstance(c.get("name"), str) for c in calls
            ):
                raise SystemExit(f"turn {i}: tool_calls must be a list of {{\"name\": ...}} objects")
        self.script = script
        self.log_file = open(log_path, "a", encoding="utf-8")
        self.lock = threading.Lock()
        self.counters = {}

    def next_number(self, counter):
        with self.lock:
            n = self.counters.get(counter, 0) + 1
            self.counters[counter] = n
            return n

    def next_seq(self):
        return self.next_number("seq")

    def next_id(self, prefix):
        return f"{prefix}_{self.next_number(prefix)}"

    def log(self, record):
        line = json.dumps(record, ensure_ascii=False)
        with self.lock:
            self.log_file.write(line + "\n")
            self.log_file.flush()


STATE = None


def is_model_item(item):
    kind = item.get("type")
    if kind == "message":
        return item.get("role") == "assistant"
    return kind in MODEL_ITEM_TYPES


def classify(body):
    """Return ("main", turn_index) or ("side", None) for a /v1/responses body."""
    if not isinstance(body, dict):
        return "side", None
    tools = body.get("tools")
    items = body.get("input")
    if not isinstance(tools, list) or not tools or not isinstance(items, list):
        return "side", None
    items = [
        i for i in items
        if isinstance(i, dict)
        and not (i.get("type", "message") == "message" and i.get("role") in SKIPPED_ROLES)
    ]
    if not items:
        return "side", None
    last = items[-1]
    last_type = last.get("type", "message")
    if not (
        (last_type == "message" and last.get("role") == "user")
        or last_type.endswith("_call_output")
    ):
        return "side", None
    turn = 0
    previous_was_model = False
    for item in items:
        model = is_model_item(item)
        if model and not previous_was_model:
            turn += 1
        previous_was_model = model
    return "main", turn


def last_session_id(body):
    """The newest "session ID <n>" Codex reported in a tool result of `body`."""
    found = None
    for item in body.get("input") or []:
        if isinstance(item, dict) and str(item.get("type", "")).endswith("_call_output"):
            for match in re.finditer(r"session ID (\d+)", json.dumps(item.get("output"))):
                found = int(match.group(1))
    return found


def with_session_id(value, session):
    if value == "{{SESSION_ID}}":
        return session
    if isinstance(value, list):
        return [with_session_id(v, session) for v in value]
    if isinstance(value, dict):
        return {k: with_session_id(v, session) for k, v in value.items()}
    return value


def output_items(kind, turn, body):
    """The output items (complete, as in response.output_item.done) to answer with."""
    if kind != "main":
        text = SIDE_ANSWER
    elif turn >= len(STATE.script):
        text = EXHAUSTED_ANSWER
    else:
        step = STATE.script[turn]
        if "tool_calls" in step:
            items = []
            for call in step["tool_calls"]:
                call_id = STATE.next_id("call_fake")
                if "input" in call:
                    items.append({
                        "type": "custom_tool_call",
                        "id": STATE.next_id("ctc_fake"),
                        "status": "completed",
                        "call_id": call_id,
                        "name": call["name"],
                        "input": str(call["input"]),
                    })
                else:
                    arguments = with_session_id(call.get("arguments", {}),
                                                last_session_id(body))
                    if not isinstance(arguments, str):
                        arguments = json.dumps(arguments)
                    item = {
                        "type": "function_call",
                        "id": STATE.next_id("fc_fake"),
                        "status": "completed",
                        "call_id": call_id,
                        "name": call["name"],
                        "arguments": arguments,
                    }
                    if "namespace" in call:
                        item["namespace"] = call["namespace"]
                    items.append(item)
            return items
        text = str(step["text"])
    return [{
        "type": "message",
        "id": STATE.next_id("msg_fake"),
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }]


def estimate_tokens(value):
    try:
        return max(1, len(json.dumps(value)) // 4)
    except (TypeError, ValueError):
        return 1


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-responses-api/1"

    def log_message(self, format, *args):  # keep stderr quiet
        pass

    def read_body(self):
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        text = raw.decode("utf-8", errors="replace")
        try:
            return json.loads(text) if text else None
        except ValueError:
            return text

    def record(self, kind, body, turn=None):
        path, _, query = self.path.partition("?")
        rec = {
            "seq": STATE.next_seq(),
            "method": self.command,
            "path": path,
            "query": query,
            "kind": kind,
        }
        if turn is not None:
            rec["turn"] = turn
        rec["headers"] = {
            k: self.headers[k] for k in LOGGED_HEADERS if self.headers.get(k) is not None
        }
        rec["body"] = body
        STATE.log(rec)

    def send_bytes(self, status, content_type, data):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.wfile.flush()

    def send_json(self, status, obj):
        self.send_bytes(status, "application/json", json.dumps(obj).encode("utf-8"))

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path = self.path.partition("?")[0].rstrip("/")
        self.record("other", None)
        if path.endswith("/models"):
            self.send_json(200, {
                "object": "list",
                "data": [{"id": MODEL_FALLBACK, "object": "model", "created": 0,
                          "owned_by": "fake"}],
                "models": [],
            })
        else:
            self.send_json(200, {})

    def do_POST(self):
        path = self.path.partition("?")[0].rstrip("/")
        body = self.read_body()
        if not path.endswith("/responses"):
            self.record("other", body)
            self.send_json(404, {"error": {
                "message": f"fake API has no {path or '/'}", "type": "invalid_request_error",
                "param": None, "code": "not_found"}})
            return
        kind, turn = classify(body)
        self.record(kind, body, turn)
        self.answer_responses(body if isinstance(body, dict) else {}, kind, turn)

    def answer_responses(self, body, kind, turn):
        items = output_items(kind, turn, body)
        input_tokens = estimate_tokens(body.get("input"))
        output_tokens = estimate_tokens(items)
        response = {
            "id": STATE.next_id("resp_fake"),
            "object": "response",
            "created_at": 0,
            "model": body.get("model") or MODEL_FALLBACK,
            "status": "in_progress",
            "output": [],
            "usage": None,
        }
        usage = {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + output_tokens,
        }
        done = dict(response, status="completed", output=items, usage=usage)
        if not body.get("stream"):
            self.send_json(200, done)
            return
        events = [{"type": "response.created", "response": response}]
        for index, item in enumerate(items):
            added = dict(item, status="in_progress")
            if item["type"] == "message":
                added["content"] = []
            elif item["type"] == "function_call":
                added["arguments"] = ""
            else:
                added["input"] = ""
            events.append({"type": "response.output_item.added", "output_index": index,
                           "item": added})
            if item["type"] == "message":
                events.append({"type": "response.output_text.delta", "item_id": item["id"],
                               "output_index": index, "content_index": 0,
                               "delta": item["content"][0]["text"]})
            events.append({"type": "response.output_item.done", "output_index": index,
                           "item": item})
        events.append({"type": "response.completed", "response": done})
        data = "".join(
            f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events
        ).encode("utf-8")
        self.send_bytes(200, "text/event-stream", data)


def substitute_port(value, port):
    if isinstance(value, str):
        return value.replace("{{PORT}}", str(port))
    if isinstance(value, list):
        return [substitute_port(v, port) for v in value]
    if isinstance(value, dict):
        return {k: substitute_port(v, port) for k, v in value.items()}
    return value


def main(argv):
    global STATE
    if len(argv) not in (3, 4):
        sys.stderr.write("usage: fake_responses_api.py SCRIPT.json LOG.jsonl [PORT]\n")
        return 2
    STATE = State(argv[1], argv[2])
    port = int(argv[3]) if len(argv) == 4 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    bound = server.server_address[1]
    STATE.script = substitute_port(STATE.script, bound)
    sys.stdout.write(f"{bound}\n")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
