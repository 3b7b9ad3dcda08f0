#!/bin/sh
# Test hook: reads the hook input, prints the printf format $1 on stdout (octal escapes
# give any bytes), exits with $2 (default 0).
cat > /dev/null
printf "$1"
exit "${2:-0}"
