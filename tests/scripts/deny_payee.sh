#!/bin/sh
# Test hook: denies every payment and quotes the payee (tool_input.to, as the
# model wrote it) in its reason, the way a script built with printf would.
to=$(sed -n 's/.*"to":"\([^"]*\)".*/\1/p')
printf '{"decision":"block","reason":"payee %s is blacklisted"}' "$to"
