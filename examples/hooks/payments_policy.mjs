// The payments policy of payments_policy.py, in JavaScript, served as a
// persistent hook:
//
//   hooks:
//     commands:
//       - name: payments_policy
//         event: PreToolUse
//         matcher: "oa__.*"
//         node: "./payments_policy.mjs:check"
//
// The function gets the call's fields as an object and returns undefined
// to let the call go ahead, or an object in Claude Code's hook output
// shape (a promise of one works too). A throw blocks the call.

const LIMIT = 1000;

export function check(call) {
  const args = call.tool_input;
  // A string the model wrote ("5000", "NaN") is read as a number; one that
  // is none gives NaN, and `!(x <= LIMIT)` stops NaN too.
  const amount = Number(args.amount ?? 0);
  if (!(amount <= LIMIT)) {
    return {
      decision: "block",
      reason: `${call.tool_name}: ${args.amount} is over the limit of ${LIMIT} per payment`,
    };
  }
  const currency = args.currency;
  if (typeof currency === "string" && currency !== currency.toUpperCase()) {
    // Rewrite: the tool receives these arguments instead.
    return { hookSpecificOutput: { updatedInput: { ...args, currency: currency.toUpperCase() } } };
  }
  return undefined;
}
