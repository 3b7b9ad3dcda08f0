#!/bin/sh
# Test hook: prints $2 hundred-character chunks of "x" on stream $1 (out or err), then exits with $3.
cat > /dev/null
chunk=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
i=0
while [ "$i" -lt "$2" ]; do
    if [ "$1" = err ]; then printf '%s' "$chunk" >&2; else printf '%s' "$chunk"; fi
    i=$((i + 1))
done
exit "${3:-0}"
