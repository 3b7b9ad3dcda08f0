#!/bin/sh
# A Claude-Code-style PreToolUse hook: the call arrives as JSON on stdin.
# Exit 2 blocks the call with stderr as the reason; exit 0 lets it through.
input=$(cat)
case "$input" in
  *'rm -rf'*|*'mkfs'*|*'| sh'*|*'|sh'*)
    echo "destructive shell command refused by check-shell.sh" >&2
    exit 2
    ;;
esac
printf '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "permissionDecisionReason": "read-only shell command"}}\n'
