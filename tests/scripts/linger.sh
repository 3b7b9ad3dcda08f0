#!/bin/sh
# Test hook: leaves a process `sleep $2` behind ($2 is a unique duration, the marker the
# test looks for in /proc), in the way $1 names, then ends:
#   setsid-timeout  a new session that no process-group kill reaches; then overruns
#   setsid-exit     the same, then exits 0 at once
#   background-exit a plain background child (output closed), then exits 0 at once
#   hold-stdout     a background child that keeps stdout open, then exits 0 at once
#   signal-parent   the same as setsid-exit, then sends signal $3 to its parent (the
#                   supervisor), waits a little and blocks (exit 2)
cat > /dev/null
case "$1" in
    setsid-timeout) setsid sleep "$2" > /dev/null 2>&1 & sleep 30 ;;
    setsid-exit) setsid sleep "$2" > /dev/null 2>&1 & ;;
    background-exit) sleep "$2" > /dev/null 2>&1 & ;;
    hold-stdout) (sleep "$2") & ;;
    signal-parent)
        setsid sleep "$2" > /dev/null 2>&1 &
        sleep 0.2
        kill -s "$3" $PPID
        sleep 0.3
        printf 'blocked after SIG%s\n' "$3" >&2
        exit 2 ;;
    *) printf 'unknown mode %s\n' "$1" >&2; exit 1 ;;
esac
exit 0
