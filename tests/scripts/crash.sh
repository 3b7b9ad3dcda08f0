#!/bin/sh
# Test hook: fails the way a broken script does (exit 1), before reading its input.
printf 'database unreachable\n' >&2
exit 1
