#!/bin/sh
# Test hook (PostToolUse): withholds a result that holds a private key
# (exit 2, the reason on stderr).
input=$(cat)
case "$input" in
*"PRIVATE KEY"*)
    printf 'the result holds a private key\n' >&2
    exit 2
    ;;
esac
