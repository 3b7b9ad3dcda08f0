#!/bin/sh
# Test hook: blocks with exit 2, the reason on stderr.
cat > /dev/null
printf 'no writes on Fridays\n' >&2
exit 2
