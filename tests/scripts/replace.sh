#!/bin/sh
# Test hook (PostToolUse): replaces the whole result with a string.
cat > /dev/null
printf '{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedToolOutput":"replaced by a hook"}}'
