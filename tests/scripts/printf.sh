#!/bin/sh
# Test hook: reads the hook input, prints the printf format $1 on stdout (octal escapes
# give any bytes) and the printf format $3 (if given) on stderr, then ends as $2 says:
# an exit code (default 0), `signal` (killed by SIGKILL) or `hang` (sleeps until the
# hook's timeout kills it).
cat > /dev/null
printf "$1"
if [ -n "$3" ]; then printf "$3" >&2; fi
case "${2:-0}" in
    signal) kill -9 $$ ;;
    hang) exec sleep 30 ;;
    *) exit "${2:-0}" ;;
esac
