#!/usr/bin/env node
// A stand-in for the GitHub CLI: answers the calls ccmsg makes with
// `gh … --json` output in gh's own shapes (test/fixtures/gh, written from gh's
// documented fields and casing — GitHub is not reachable from here to record
// from — or the directory FAKE_GH_DIR names), projected to the fields asked for as gh does, and fails the way gh
// fails (unknown field, not signed in, no such PR, HTTP 404). Run as `gh` on
// PATH, or as `node fake-gh.mjs …` through ECC_GH_SHIM.
//   FAKE_GH_LOG       append each call's arguments, one line per call
//   FAKE_GH_DELAY_MS  take this long to answer
//   FAKE_GH_BUSY_DIR  hold a file there while answering (tests see a call in flight)
//   FAKE_GH_GATE      answer only once this file exists (a test opens the gate
//                     when it has seen the call in flight, whatever the load)
//   FAKE_GH_UNAUTH    answer as gh does when nobody is signed in
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const args = process.argv.slice(2);
const env = process.env;
const dir =
  env.FAKE_GH_DIR || join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "gh");
if (env.FAKE_GH_LOG) appendFileSync(env.FAKE_GH_LOG, `${args.join(" ")}\n`);

const busy = env.FAKE_GH_BUSY_DIR ? join(env.FAKE_GH_BUSY_DIR, `gh-${process.pid}`) : undefined;
if (busy) {
  mkdirSync(env.FAKE_GH_BUSY_DIR, { recursive: true });
  writeFileSync(busy, args.join(" "));
}
const delay = Number(env.FAKE_GH_DELAY_MS) || 0;
if (delay > 0) await new Promise((r) => setTimeout(r, delay));
// Held at the gate until the test opens it; if what ran it is gone (an
// instance killed, the test over) nobody will, so it ends instead of waiting
// forever (one was found polling 26 min after its suite). Gone before this
// line ran, it left the fake orphaned from the start (parent pid 1).
const parent = process.ppid;
while (env.FAKE_GH_GATE && !existsSync(env.FAKE_GH_GATE)) {
  if (process.ppid !== parent || process.ppid === 1) process.exit(1);
  await new Promise((r) => setTimeout(r, 20));
}

function finish(code, out = "", err = "") {
  if (out) process.stdout.write(out);
  if (err) process.stderr.write(err);
  if (busy) rmSync(busy, { force: true });
  process.exit(code);
}

function flag(name) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

function read(name) {
  return JSON.parse(readFileSync(join(dir, name), "utf8"));
}

/** `--json a,b` over the fixture's objects, refusing a field they lack as gh does. */
function project(list, fields) {
  const wanted = fields.split(",");
  const known = new Set(list.flatMap((o) => Object.keys(o)));
  const unknown = list.length > 0 ? wanted.find((f) => !known.has(f)) : undefined;
  if (unknown !== undefined)
    finish(
      1,
      "",
      `Unknown JSON field: "${unknown}"\nAvailable fields:\n${[...known]
        .sort()
        .map((f) => `  ${f}`)
        .join("\n")}\n`,
    );
  return list.map((o) => Object.fromEntries(wanted.map((f) => [f, o[f]])));
}

const out = (v) => finish(0, `${JSON.stringify(v, null, 2)}\n`);

if (env.FAKE_GH_UNAUTH) {
  if (args[0] === "auth")
    finish(1, "", "You are not logged into any GitHub hosts. To log in, run: gh auth login\n");
  finish(
    4,
    "",
    "To get started with GitHub CLI, please run:  gh auth login\nAlternatively, populate the GH_TOKEN environment variable with a GitHub API authentication token.\n",
  );
}

const [cmd, sub] = args;
const limit = Number(flag("--limit") ?? 30);
switch (`${cmd} ${sub}`) {
  case "auth status":
    finish(0, "github.com\n  ✓ Logged in to github.com account hubot (keyring)\n");
    break;
  case "repo view":
    out(read("repo-view.json"));
    break;
  case "pr list":
  case "issue list": {
    const state = flag("--state") ?? "open";
    const file = `${cmd}-list-${state}.json`;
    const list = existsSync(join(dir, file)) ? read(file) : [];
    out(project(list.slice(0, limit), flag("--json") ?? "number"));
    break;
  }
  case "pr view":
  case "issue view": {
    const n = args[2];
    if (n === undefined || n.startsWith("-")) {
      // The current branch's PR: these fixtures have none.
      finish(1, "", `no pull requests found for branch "main"\n`);
    }
    const state = read("views.json")[cmd]?.[n];
    if (state === undefined) {
      const kind = cmd === "pr" ? "PullRequest" : "Issue";
      finish(
        1,
        "",
        `GraphQL: Could not resolve to a ${kind} with the number of ${n}. (repository.${cmd === "pr" ? "pullRequest" : "issue"})\n`,
      );
    }
    out({ state });
    break;
  }
  case "pr checks":
    finish(1, "", `no pull requests found for branch "main"\n`);
    break;
  case "run list":
    out([]);
    break;
  case "api graphql":
    out(read("discussions.json"));
    break;
  default: {
    if (cmd === "api" && /^repos\/[^/]+\/[^/]+\/compare\//.test(sub ?? "")) {
      const head = sub.split("...")[1]?.split("?")[0];
      const file = `compare-${head}.json`;
      if (existsSync(join(dir, file))) out(read(file));
      finish(
        1,
        `${JSON.stringify({ message: "Not Found", documentation_url: "https://docs.github.com/rest/commits/commits#compare-two-commits", status: "404" })}\n`,
        "gh: Not Found (HTTP 404)\n",
      );
    }
    finish(1, "", `unknown command "${cmd}" for "gh"\n`);
  }
}
