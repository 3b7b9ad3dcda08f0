#!/bin/sh
# Test hook: leaves a background child that would write $1/marker after 3 s,
# then overruns its timeout. Killing the whole process group must kill the child too.
dir="$1"
cat > /dev/null
(
    printf 'started' > "$dir/started"
    sleep 3
    printf 'survived' > "$dir/marker"
) &
sleep 30
exit 0
