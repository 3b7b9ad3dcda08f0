#!/bin/sh
# A SessionStart hook: plain stdout becomes context for the session.
cat > /dev/null
echo "Finance policy: payments over 50,000 CNY need an approval in the #finance-approvals Feishu group."
