#!/bin/sh
# Test hook: records what it receives into directory $1 (stdin, argv, environment), then allows.
out="$1"
cat > "$out/stdin.json"
printf '%s\n' "$@" > "$out/argv.txt"
set > "$out/variables.txt"
{
    printf 'secret=%s\n' "${HOOKS_TEST_SECRET-unset}"
    printf 'passed=%s\n' "${HOOKS_TEST_PASS-unset}"
    printf 'event=%s\n' "${HOOKS_EVENT-unset}"
    printf 'tool=%s\n' "${HOOKS_TOOL_NAME-unset}"
    printf 'project=%s\n' "${CLAUDE_PROJECT_DIR-unset}"
    printf 'path=%s\n' "${PATH:+set}"
} > "$out/env.txt"
exit 0
