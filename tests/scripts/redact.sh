#!/bin/sh
# Test hook (PostToolUse): replaces "secret" in a string tool result with
# "[redacted]" and returns the whole result as updatedToolOutput.
result=$(sed -n 's/.*"tool_response":\("[^"]*"\).*/\1/p' | sed 's/secret/[redacted]/g')
printf '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":%s}}' "$result"
