#!/bin/sh
# Test hook: session context as plain text on stdout.
cat > /dev/null
printf 'Project rules: answer in French.\n'
