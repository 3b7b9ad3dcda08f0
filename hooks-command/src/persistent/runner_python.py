"""Serves one Python function as a hooks persistent hook process.

Started by the hooks runtime as `python3 -c <this file> module:function`.
It imports the module once, then reads one JSON request per line on stdin
and writes one JSON answer per line on stdout, each answer carrying the id
of its request. The function gets the request's fields as a dict (the
command-hook input: tool_name, tool_input, hook_event_name, ...) and returns
None (no decision) or a dict in Claude Code's JSON output shape. An
exception is answered as {"id": ..., "error": "..."}, which the runtime
treats as a failure of the hook. A request with "probe": true comes from
`hooks check` and is answered without calling the function.

Only the standard library is used. Whatever the function prints goes to
stderr: stdout carries answers alone.

`python -c` puts the working directory first on the module path, where a
file such as `json.py` would be imported in place of the standard
library's. The runner takes it off before importing anything, and puts it
back last, for the policy's own module: installed modules come first.
"""

import sys

_here = sys.path[0] if sys.path and sys.path[0] in ("", ".") else None
if _here is not None:
    del sys.path[0]

import asyncio
import importlib
import inspect
import json
import os
import traceback

sys.path.append(os.getcwd())


def load(target):
    module_name, _, path = target.partition(":")
    module = importlib.import_module(module_name)
    function = module
    for part in path.split("."):
        function = getattr(function, part)
    if not callable(function):
        raise TypeError(f"{target} is a {type(function).__name__}, not a function")
    return function


def answer_of(result):
    if result is None:
        return {}
    if not isinstance(result, dict):
        raise TypeError(
            "the function must return None or a dict (the hook's JSON output, "
            f'e.g. {{"decision": "block", "reason": "..."}}), not {type(result).__name__}'
        )
    if "id" in result or "error" in result:
        raise TypeError('the returned dict must not hold "id" or "error"')
    return dict(result)


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: python3 -c <runner> module:function\n")
        return 2
    # Answers go to a private copy of stdout; file descriptor 1 and
    # sys.stdout become stderr, so a print() cannot corrupt the protocol.
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        function = load(sys.argv[1])
    except BaseException:
        traceback.print_exc()
        sys.stderr.write(f"cannot load {sys.argv[1]}\n")
        return 1
    loop = None
    requests = sys.stdin.buffer
    while True:
        line = requests.readline()
        if not line:
            return 0
        request = json.loads(line)
        request_id = request.pop("id")
        # SystemExit too: a script ported from a command hook may call
        # sys.exit(2) to block, and must not end the runner silently.
        try:
            if request.get("probe") is True:
                answer = {}
            else:
                result = function(request)
                if inspect.isawaitable(result):
                    if loop is None:
                        loop = asyncio.new_event_loop()
                    result = loop.run_until_complete(result)
                answer = answer_of(result)
        except (Exception, SystemExit) as error:
            traceback.print_exc()
            text = "".join(traceback.format_exception_only(type(error), error)).strip()
            answer = {"error": text or type(error).__name__}
        answer["id"] = request_id
        try:
            text = json.dumps(answer, allow_nan=False)
        except (TypeError, ValueError) as error:
            text = json.dumps(
                {"id": request_id, "error": f"the function returned what JSON cannot hold: {error}"}
            )
        answers.write(text.encode("utf-8") + b"\n")
        answers.flush()


sys.exit(main())
