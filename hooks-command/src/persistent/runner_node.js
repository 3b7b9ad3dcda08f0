// Serves one JavaScript function as a hooks persistent hook process.
//
// Started by the hooks runtime as `node -e <this file> module:function`.
// It loads the module once (a path relative to the working directory, or a
// package name; ES module or CommonJS), then reads one JSON request per
// line on stdin and writes one JSON answer per line on stdout, each with
// the id of its request. Calls run concurrently; each answer is written when
// its promise settles. The function gets the request's fields as an object
// and returns (or resolves to) undefined or null (no decision) or an object
// in Claude Code's JSON output shape. A throw or rejection is answered as
// {"id": ..., "error": "..."}, a failure of the hook. A request with
// "probe": true comes from `hooks check` and is answered without calling
// the function. Whatever the function logs goes to stderr.
"use strict";

const path = require("node:path");
const readline = require("node:readline");
const { pathToFileURL } = require("node:url");

const answers = process.stdout.write.bind(process.stdout);
process.stdout.write = process.stderr.write.bind(process.stderr);
console.log = console.error;
console.info = console.error;
console.debug = console.error;
// A promise the policy left behind that fails later must not end the runner.
process.on("unhandledRejection", (reason) => console.error("unhandled rejection:", reason));

// JSON.stringify writes NaN and Infinity as null; refuse them instead, as
// Python's runner does.
function finiteOnly(key, value) {
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw new TypeError(`${key || "the answer"} is ${value}, which JSON cannot hold`);
  }
  return value;
}

// A thrown value as one line of text, whatever it is.
function describe(error) {
  try {
    const text = (error && error.stack && String(error.stack).split("\n")[0]) || String(error);
    return text || "an empty error";
  } catch {
    return "an error that cannot be shown as text";
  }
}

function answerOf(result) {
  if (result === undefined || result === null) {
    return {};
  }
  if (typeof result !== "object" || Array.isArray(result)) {
    throw new TypeError(
      "the function must return undefined or an object (the hook's JSON output, " +
        'e.g. {decision: "block", reason: "..."}), not ' +
        (Array.isArray(result) ? "an array" : typeof result)
    );
  }
  if ("id" in result || "error" in result) {
    throw new TypeError('the returned object must not hold "id" or "error"');
  }
  return { ...result };
}

async function load(target) {
  const at = target.lastIndexOf(":");
  const module = target.slice(0, at);
  const name = target.slice(at + 1);
  const local = module.startsWith(".") || module.startsWith("/");
  const specifier = local ? pathToFileURL(path.resolve(process.cwd(), module)).href : module;
  const namespace = await import(specifier);
  const lookup = (root) =>
    name.split(".").reduce((value, part) => (value === undefined || value === null ? value : value[part]), root);
  let found = lookup(namespace);
  if (typeof found !== "function") {
    // A CommonJS module's exports may only be on `default`.
    found = lookup(namespace.default);
  }
  if (typeof found !== "function") {
    throw new TypeError(`${target} is ${typeof found}, not a function`);
  }
  return found;
}

async function serve(request, fn) {
  const id = request.id;
  delete request.id;
  let answer;
  try {
    answer = request.probe === true ? {} : answerOf(await fn(request));
  } catch (error) {
    try {
      console.error(error);
    } catch {
      // Nothing more to say about it.
    }
    answer = { error: describe(error) };
  }
  let text;
  try {
    text = JSON.stringify({ ...answer, id }, finiteOnly);
  } catch (error) {
    text = JSON.stringify({ id, error: `the function returned what JSON cannot hold: ${describe(error)}` });
  }
  answers(text + "\n");
}

async function main() {
  const target = process.argv[process.argv.length - 1];
  let fn;
  try {
    fn = await load(target);
  } catch (error) {
    console.error(error);
    console.error(`cannot load ${target}`);
    process.exit(1);
  }
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on("line", (line) => {
    serve(JSON.parse(line), fn);
  });
  lines.on("close", () => process.exit(0));
}

main();
