#!/bin/sh
# Test hook: reads the hook input, prints $1 on stdout and $2 on stderr, exits with $3 (default 0).
cat > /dev/null
printf '%s' "$1"
printf '%s' "$2" >&2
exit "${3:-0}"
