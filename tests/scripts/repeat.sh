#!/bin/sh
# Test hook: reads the hook input, prints the printf format $2 $1 times on stdout, then
# the format $3, and exits 0: a decision hidden after padding or progress lines.
cat > /dev/null
i=0
while [ "$i" -lt "$1" ]; do
    printf "$2"
    i=$((i + 1))
done
printf "$3"
exit 0
