#!/usr/bin/env node
// The `ccmsg` command. Each command group is a module loaded on demand, so a
// command pays only for what it uses (a cold `ccmsg post` loads the client and
// nothing of the instance).

import * as nodeModule from "node:module";
import { ContractError } from "../contract/errors.js";
import { VERSION } from "../version.js";
import { fail } from "./options.js";

// V8's code cache for the chunks loaded from here on (Node 22.1 and later;
// absent on Node 20): a later start skips parsing them again.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

export type Command = (argv: string[]) => Promise<void>;

// Modules that hold several commands: one loader each.
const messages = () => import("./messages.js");
const watch = () => import("./watch.js");

/** Every command, its group module, and one line of help. */
export const COMMANDS: Record<
  string,
  { group: () => Promise<Record<string, Command>>; help: string }
> = {
  daemon: {
    group: () => import("./daemon.js"),
    help: "daemon run|start|stop|status|restart — manage the instance",
  },
  ping: { group: () => import("./ping.js"), help: "ping — health of the instance" },
  open: {
    group: () => import("./open.js"),
    help: "open [--print] — a one-time link that signs a browser in to the console",
  },
  hello: { group: messages, help: "hello [--hook] — greet the instance as this session" },
  stopping: {
    group: messages,
    help: "stopping [--reason r] [--hook] — declare this session is stopping",
  },
  post: { group: messages, help: "post <sid> <text> — send a message to a session" },
  reply: { group: messages, help: "reply <mid> [--to <sid>] <text> — answer a delivered message" },
  notify: {
    group: messages,
    help: "notify <text> [--about <sid>] — a line for the person watching",
  },
  inbox: { group: messages, help: "inbox — take the messages held for this session" },
  peers: { group: watch, help: "peers — sessions connected now and lately lost" },
  subscribe: { group: watch, help: "subscribe <topic>… — stream topic frames as NDJSON" },
  kv: { group: () => import("./kv.js"), help: "kv get|set|del|list — the shared key-value store" },
  board: {
    group: () => import("./board.js"),
    help: "board add|list|show|claim|move|update — the work board",
  },
  status: {
    group: () => import("./status.js"),
    help: "status [--json|--markdown] [--exit-code] — readiness summary",
  },
  hud: {
    group: () => import("./hud.js"),
    help: "hud [--sid s] — the ecc.hud-status.v1 payload for a session",
  },
  statusline: {
    group: () => import("./statusline.js"),
    help: "statusline — one compact line from the harness's statusline JSON",
  },
  check: {
    group: () => import("./check.js"),
    help: "check run — run the local checks the config declares",
  },
  session: {
    group: () => import("./session.js"),
    help: "session diff|pr|stop|resume|create — session controls",
  },
  queue: {
    group: () => import("./queue.js"),
    help: "queue merge|conflict — merge and conflict queues",
  },
};

function usage(): string {
  const lines = Object.values(COMMANDS).map((c) => `  ccmsg ${c.help}`);
  return [
    "usage: ccmsg <command> [options]",
    "",
    ...lines,
    "",
    "Options for every command: --json, --text, --sid <sid>, --state-dir <dir>, --no-start",
  ].join("\n");
}

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "help" || name === "--help" || name === "-h") {
    process.stdout.write(`${usage()}\n`);
    return;
  }
  if (name === "--version" || name === "version") {
    process.stdout.write(`ccmsg ${VERSION}\n`);
    return;
  }
  const entry = COMMANDS[name];
  if (entry === undefined)
    throw new ContractError("invalid_args", `unknown command: ${name}\n${usage()}`);
  // The instance's modules load while its command group does: a restart
  // waits for both (DR-0019).
  if (name === "daemon" && rest[0] === "run") void import("../instance/server.js");
  const group = await entry.group();
  await group[name]!(rest);
}

main(process.argv.slice(2)).catch(fail);
