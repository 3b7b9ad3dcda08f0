#!/usr/bin/env python3
"""A fake Anthropic Messages API for driving the real Claude Code binary offline.

Usage:
    python3 fake_messages_api.py SCRIPT.json LOG.jsonl [PORT]

PORT defaults to 0 (the OS picks a free one). The first line written to stdout
is the port actually bound, flushed at once, so a caller can read it and then
export ANTHROPIC_BASE_URL=http://127.0.0.1:<port>. The server listens on
127.0.0.1 only, handles each connection on its own thread, and runs until it
is killed (SIGTERM / SIGINT).

Script
------
SCRIPT.json holds the model's turns, in order, either as a bare list or as
{"turns": [...], "agents": {"<marker>": [...turns...], ...}}. "agents" gives
sub-agents (Task / Agent tool) their own scripts: a main request whose FIRST
user message contains <marker> (put it in the Agent tool's prompt) is answered
from that list instead of "turns". Each turn is one of

    {"tool_use": [{"name": "Bash", "input": {"command": "echo hi"}}, ...]}
    {"text": "Some final answer."}

Every string in the script has "{{PORT}}" replaced by the port the server
bound. A tool_use turn answers with one tool_use content block per entry (several
entries make a parallel tool call) and stop_reason "tool_use"; a text turn
answers with one text block and stop_reason "end_turn". Every tool_use block
gets an id unique for the life of the server: toolu_fake_<n>, n counting up
from 1 (fake web_search server-tool ids, srvtoolu_fake_<n>, share the counter). Once the script is used up, main-loop requests get the text "Done."
(so a run always ends).

Log
---
Every request is appended to LOG.jsonl as one JSON line:

    {"seq": n, "method": "POST", "path": "/v1/messages", "query": "beta=true",
     "kind": "main" | "side" | "count_tokens" | "other",
     "turn": <script index answered, main requests only>,
     "agent": <the "agents" marker whose script answered, if any>,
     "headers": {...a few useful ones...},
     "body": <the parsed JSON body, or the raw text if it was not JSON>}

The file is opened in append mode and each line is written and flushed under
a lock, so lines never interleave.

Endpoints
---------
POST /v1/messages                The model. Streams server-sent events when the
                                 body has "stream": true (message_start,
                                 content_block_start, ping, content_block_delta
                                 with text_delta / input_json_delta,
                                 content_block_stop, message_delta with
                                 stop_reason and usage, message_stop); plain
                                 JSON (a Message object) otherwise.
POST /v1/messages/count_tokens   {"input_tokens": <rough estimate>}.
GET /page/<anything>             A small HTML page. (Claude Code's WebFetch
                                 upgrades http:// to https://, so WebFetch
                                 itself needs an HTTPS server, a CA given in
                                 NODE_EXTRA_CA_CERTS and the setting
                                 skipWebFetchPreflight: true.)
GET /v1/models                   A one-model list (claude-fake-1).
HEAD / GET on any other path     200 with {} (Claude Code's connectivity probe
                                 HEAD /api/hello, sent when nonessential
                                 traffic is not disabled, is satisfied by it).
POST on any other path           404 with the API's error shape
                                 {"type": "error", "error": {"type":
                                 "not_found_error", ...}}, and logged, so a new
                                 endpoint shows up in the log.
Claude Code 2.1.337, run as tests/claude_code.rs runs it, only ever sent
POST /v1/messages?beta=true (always streamed); count_tokens, /v1/models and
the probes are there for other versions and flags.
The query string (Claude Code sends ?beta=true) is ignored for routing.

Which requests advance the script (the side-request rule)
---------------------------------------------------------
Besides the agent loop, Claude Code sends side requests to /v1/messages.
Seen with 2.1.337 headless: the WebSearch tool's request (tools = only the
web_search server tool) and the WebFetch tool's page summary (tools = []).
Other versions and modes also send a one-token quota probe, session-title,
prompt-suggestion and summary calls; those carry no tools or max_tokens 1.
A request is a MAIN-loop request iff all of these hold:

  1. its body has a "tools" list with at least one client tool (an entry with
     an "input_schema": the agent's tool set). The WebSearch tool's request
     carries only the server tool {"type": "web_search_20250305", ...}, so
     it is a side request;
  2. its "max_tokens" is greater than 1 (the quota probe asks for 1);
  3. its last message, skipping messages with role "system" (Claude Code
     2.1.33x sends mid-conversation system turns carrying the environment,
     skills list and reminders, often AFTER the user prompt), has role "user"
     and its content is a string, or a list holding at least one "text" or
     "tool_result" block (i.e. a user prompt, or the results of the previous
     turn's tools).

Everything else is a SIDE request and gets the short text answer "OK."
without touching the script; a side request offering the web_search server
tool gets a server_tool_use block, a web_search_tool_result block with one
fake result (https://example.invalid/result) and the text "OK.", so the
WebSearch tool has something to report.

Main requests do not consume turns by counting calls. The turn a main request
gets is the number of assistant messages already in its "messages" list
(consecutive assistant messages counted once, since the API merges them;
"system" messages ignored):
the first request of a conversation has none and gets turn 0, the request
that carries the results of turn 0's tools has one and gets turn 1, and so on.
That makes the choice idempotent: a retried request (network error, 5xx,
Claude Code's own retry) gets the same turn again instead of skipping one,
and a side request that happens to carry tools cannot desynchronise the
script. A sub-agent (Task / Agent tool) starts its own conversation with no
assistant messages, so it would replay the main script from turn 0; give it
its own script under "agents" (see Script above) instead.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SIDE_ANSWER = "OK."
EXHAUSTED_ANSWER = "Done."
MODEL_FALLBACK = "claude-fake-1"
PAGE_HTML = (
    "<!doctype html><html><head><title>Fake page</title></head><body>"
    "<h1>Fake page</h1><p>This page is served by fake_messages_api.py.</p>"
    "</body></html>"
)
LOGGED_HEADERS = (
    "user-agent",
    "anthropic-version",
    "anthropic-beta",
    "x-app",
    "content-type",
    "accept",
    "x-stainless-retry-count",
)


class State:
    def __init__(self, script_path, log_path):
        with open(script_path, encoding="utf-8") as f:
            script = json.load(f)
        agents = {}
        if isinstance(script, dict):
            agents = script.get("agents", {})
            script = script.get("turns", [])
        if not isinstance(script, list):
            raise SystemExit("script must be a list of turns or {\"turns\": [...]}")
        for turns in [script] + list(agents.values()):
            for i, turn in enumerate(turns):
                if not isinstance(turn, dict) or not ("tool_use" in turn or "text" in turn):
                    raise SystemExit(f"turn {i} must be {{\"tool_use\": [...]}} or {{\"text\": ...}}")
        self.script = script
        self.agents = agents
        self.log_file = open(log_path, "a", encoding="utf-8")
        self.lock = threading.Lock()
        self.seq = 0
        self.tool_ids = 0
        self.message_ids = 0

    def next_seq(self):
        with self.lock:
            self.seq += 1
            return self.seq

    def next_tool_id(self):
        with self.lock:
            self.tool_ids += 1
            return f"toolu_fake_{self.tool_ids}"

    def next_message_id(self):
        with self.lock:
            self.message_ids += 1
            return f"msg_fake_{self.message_ids}"

    def log(self, record):
        line = json.dumps(record, ensure_ascii=False)
        with self.lock:
            self.log_file.write(line + "\n")
            self.log_file.flush()


STATE = None


def classify(body):
    """Return ("main", turn_index) or ("side", None) for a /v1/messages body."""
    if not isinstance(body, dict):
        return "side", None
    tools = body.get("tools")
    if not isinstance(tools, list) or not any(
        isinstance(t, dict) and "input_schema" in t for t in tools
    ):
        return "side", None
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens <= 1:
        return "side", None
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "side", None
    # Claude Code puts mid-conversation "system" turns (environment, skills,
    # reminders) into messages; they are skipped when looking for the last turn.
    turns = [m for m in messages if isinstance(m, dict) and m.get("role") != "system"]
    if not turns:
        return "side", None
    last = turns[-1]
    if last.get("role") != "user":
        return "side", None
    content = last.get("content")
    if isinstance(content, str):
        ok = True
    elif isinstance(content, list):
        ok = any(
            isinstance(b, dict) and b.get("type") in ("text", "tool_result")
            for b in content
        )
    else:
        ok = False
    if not ok:
        return "side", None
    turn = 0
    previous_role = None
    for m in turns:
        role = m.get("role")
        if role == "assistant" and previous_role != "assistant":
            turn += 1
        previous_role = role
    return "main", turn


def first_user_text(body):
    for m in body.get("messages", []):
        if isinstance(m, dict) and m.get("role") == "user":
            c = m.get("content")
            if isinstance(c, str):
                return c
            if isinstance(c, list):
                return "\n".join(
                    b.get("text", "") for b in c if isinstance(b, dict) and b.get("type") == "text"
                )
            return ""
    return ""


def script_for(body):
    """The turn list a main request is answered from (and its name, for the log)."""
    if STATE.agents:
        text = first_user_text(body)
        for marker, turns in STATE.agents.items():
            if marker in text:
                return marker, turns
    return None, STATE.script


def web_search_query(body):
    """The query of a WebSearch side request, or None if it offers no web_search."""
    tools = body.get("tools") if isinstance(body, dict) else None
    if not isinstance(tools, list) or not any(
        isinstance(t, dict) and str(t.get("type", "")).startswith("web_search") for t in tools
    ):
        return None
    text = first_user_text(body)
    marker = "query:"
    return text.split(marker, 1)[1].strip() if marker in text else text.strip()


def content_for(kind, turn, script, body=None):
    """The content blocks (with input as objects) and stop_reason to answer with."""
    if kind != "main":
        query = web_search_query(body)
        if query is not None:
            server_id = STATE.next_tool_id().replace("toolu_", "srvtoolu_")
            return [
                {"type": "server_tool_use", "id": server_id, "name": "web_search",
                 "input": {"query": query}},
                {"type": "web_search_tool_result", "tool_use_id": server_id,
                 "content": [{"type": "web_search_result", "title": "Fake result",
                              "url": "https://example.invalid/result",
                              "encrypted_content": "ZmFrZQ==", "page_age": None}]},
                {"type": "text", "text": SIDE_ANSWER},
            ], "end_turn"
        return [{"type": "text", "text": SIDE_ANSWER}], "end_turn"
    if turn >= len(script):
        return [{"type": "text", "text": EXHAUSTED_ANSWER}], "end_turn"
    step = script[turn]
    if "tool_use" in step:
        blocks = []
        for call in step["tool_use"]:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": STATE.next_tool_id(),
                    "name": call["name"],
                    "input": call.get("input", {}),
                }
            )
        return blocks, "tool_use"
    return [{"type": "text", "text": str(step["text"])}], "end_turn"


def estimate_tokens(body):
    try:
        return max(1, len(json.dumps(body)) // 4)
    except (TypeError, ValueError):
        return 1


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-messages-api/1"

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

    def record(self, kind, body, turn=None, agent=None):
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
        if agent is not None:
            rec["agent"] = agent
        rec["headers"] = {
            k: self.headers[k] for k in LOGGED_HEADERS if self.headers.get(k) is not None
        }
        rec["body"] = body
        STATE.log(rec)

    def send_json(self, status, obj):
        data = json.dumps(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", "req_fake")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def do_HEAD(self):
        self.record("other", None)
        self.send_json(200, {})

    def do_GET(self):
        self.record("other", None)
        if self.path.partition("?")[0].rstrip("/") == "/v1/models":
            self.send_json(200, {
                "data": [{"type": "model", "id": MODEL_FALLBACK, "display_name": "Fake",
                          "created_at": "2025-01-01T00:00:00Z"}],
                "has_more": False, "first_id": MODEL_FALLBACK, "last_id": MODEL_FALLBACK,
            })
            return
        if self.path.startswith("/page/"):
            data = PAGE_HTML.encode("utf-8")
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_json(200, {})

    def do_POST(self):
        body = self.read_body()
        path = self.path.partition("?")[0].rstrip("/")
        if path == "/v1/messages":
            kind, turn = classify(body)
            agent, script = script_for(body) if kind == "main" else (None, [])
            self.record(kind, body, turn, agent)
            self.answer_messages(body, kind, turn, script)
        elif path == "/v1/messages/count_tokens":
            self.record("count_tokens", body)
            self.send_json(200, {"input_tokens": estimate_tokens(body)})
        else:
            self.record("other", body)
            self.send_json(404, {"type": "error", "error": {
                "type": "not_found_error", "message": f"fake API has no {path or '/'}"}})

    def answer_messages(self, body, kind, turn, script):
        body = body if isinstance(body, dict) else {}
        model = body.get("model") or MODEL_FALLBACK
        blocks, stop_reason = content_for(kind, turn, script, body)
        input_tokens = estimate_tokens(body)
        output_tokens = max(1, len(json.dumps(blocks)) // 4)
        message_id = STATE.next_message_id()
        usage = {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        }
        if not body.get("stream"):
            self.send_json(
                200,
                {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": blocks,
                    "stop_reason": stop_reason,
                    "stop_sequence": None,
                    "usage": usage,
                },
            )
            return
        events = []

        def event(name, data):
            events.append(f"event: {name}\ndata: {json.dumps(data)}\n\n")

        event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": dict(usage, output_tokens=1),
                },
            },
        )
        event("ping", {"type": "ping"})
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index,
                     "content_block": {"type": "text", "text": ""}},
                )
                event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index,
                     "delta": {"type": "text_delta", "text": block["text"]}},
                )
            elif block["type"] == "web_search_tool_result":
                event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": block},
                )
            else:
                event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index,
                     "content_block": {"type": block["type"], "id": block["id"],
                                       "name": block["name"], "input": {}}},
                )
                partial = json.dumps(block["input"])
                # Two deltas, to exercise Claude Code's partial-JSON assembly.
                cut = len(partial) // 2
                for piece in (partial[:cut], partial[cut:]):
                    event(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index,
                         "delta": {"type": "input_json_delta", "partial_json": piece}},
                    )
            event("content_block_stop", {"type": "content_block_stop", "index": index})
        event(
            "message_delta",
            {"type": "message_delta",
             "delta": {"stop_reason": stop_reason, "stop_sequence": None},
             "usage": {"output_tokens": output_tokens}},
        )
        event("message_stop", {"type": "message_stop"})
        data = "".join(events).encode("utf-8")
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", "req_fake")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()


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
        sys.stderr.write("usage: fake_messages_api.py SCRIPT.json LOG.jsonl [PORT]\n")
        return 2
    STATE = State(argv[1], argv[2])
    port = int(argv[3]) if len(argv) == 4 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    bound = server.server_address[1]
    STATE.script = substitute_port(STATE.script, bound)
    STATE.agents = substitute_port(STATE.agents, bound)
    sys.stdout.write(f"{server.server_address[1]}\n")
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
