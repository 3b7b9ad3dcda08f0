#!/bin/sh
# Test hook: never answers in time.
cat > /dev/null
sleep 30
exit 0
