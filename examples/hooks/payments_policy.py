"""A payments policy written in Python, served as a persistent hook.

Declared in an agent's config as

    hooks:
      commands:
        - name: payments_policy
          event: PreToolUse
          matcher: "oa__.*"
          python: "payments_policy:check"

and, for results,

        - name: card_numbers
          event: PostToolUse
          python: "payments_policy:redact"

Each function gets the call's fields as a dict (`tool_name`, `tool_input`,
`tool_response` after the tool, `user_id`, `hook_event_name`, ...) and
returns None to let the call go ahead, or a dict in Claude Code's hook
output shape. An exception blocks the call.
"""

import re

LIMIT = 1000
CARD = re.compile(r"\b(?:\d[ -]?){12,15}(\d{4})\b")


def check(call):
    args = call["tool_input"]
    # A string the model wrote ("5000", "nan") is read as a number; one that
    # is none raises, and an exception blocks. `not <=` also stops NaN.
    amount = float(args.get("amount", 0))
    if not amount <= LIMIT:
        return {
            "decision": "block",
            "reason": f"{call['tool_name']}: {amount:g} is over the limit of {LIMIT} per payment",
        }
    currency = args.get("currency")
    if isinstance(currency, str) and currency != currency.upper():
        # Rewrite: the tool receives these arguments instead.
        return {"hookSpecificOutput": {"updatedInput": {**args, "currency": currency.upper()}}}
    return None


def redact(call):
    text = call.get("tool_response")
    if not isinstance(text, str):
        return None
    cleaned = CARD.sub(r"**** \1", text)
    if cleaned == text:
        return None
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": cleaned}}
