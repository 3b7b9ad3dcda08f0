#!/usr/bin/env python3
"""A persistent hook process for the tests: reads one request per line and
does what the call's `tool_input.action` says, each request in a thread of
its own so that answers can come back out of order."""

import json
import os
import subprocess
import sys
import threading
import time

lock = threading.Lock()


def write(text):
    with lock:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()


def answer(request_id, **fields):
    fields["id"] = request_id
    write(json.dumps(fields))


def deny(request_id, reason):
    answer(request_id, hookSpecificOutput={"permissionDecision": "deny", "permissionDecisionReason": reason})


def handle(request):
    request_id = request["id"]
    if request.get("probe"):
        return answer(request_id)
    args = request.get("tool_input") or {}
    action = args.get("action", "allow")
    if action in ("allow", "stall"):
        answer(request_id)
    elif action == "deny":
        deny(request_id, "denied: " + args.get("why", ""))
    elif action == "rewrite":
        answer(request_id, hookSpecificOutput={"updatedInput": {"action": "rewritten"}})
    elif action == "redact":
        answer(request_id, hookSpecificOutput={"hookEventName": "PostToolUse", "updatedToolOutput": "[redacted]"})
    elif action == "id":
        deny(request_id, f"id={request_id}")
    elif action == "pid":
        deny(request_id, f"pid={os.getpid()}")
    elif action == "env":
        deny(request_id, json.dumps(dict(os.environ)))
    elif action == "slow":
        time.sleep(args["ms"] / 1000)
        deny(request_id, f"n={args['n']}")
    elif action == "crash":
        sys.stdout.flush()
        os._exit(3)
    elif action == "hang":
        pass
    elif action == "garbage":
        write("this is not an answer")
    elif action == "unknown_id":
        answer(request_id + 1000)
    elif action == "twice":
        answer(request_id)
        answer(request_id)
    elif action == "big":
        deny(request_id, "x" * (2 << 20))
    elif action == "error":
        answer(request_id, error="ValueError: no amount")
    elif action == "not_protocol":
        answer(request_id, permissionDecison="deny")
    elif action == "close":
        os.close(1)
    elif action == "child":
        child = subprocess.Popen(["sleep", "300"], start_new_session=True)
        deny(request_id, f"child={child.pid}")


def main():
    for line in sys.stdin:
        request = json.loads(line)
        args = request.get("tool_input") or {}
        if args.get("action") == "stall":
            # Stop reading stdin for a while: the runtime's writes fill the pipe.
            time.sleep(args["ms"] / 1000)
        threading.Thread(target=handle, args=(request,), daemon=True).start()


main()
