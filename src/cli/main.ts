#!/usr/bin/env node
// The `ccmsg` command. Each command group is a module loaded on demand, so a
// command pays only for what it uses (a cold `ccmsg post` loads the client and
// nothing of the instance).

import * as nodeModule from "node:module";
import { parseArgs } from "node:util";
import { type Flags, UsageError } from "../client/flags.js";
import { sessionIdFrom } from "../harness/identity.js";
import { VERSION } from "../util/version.js";
import type { Command } from "./command.js";
import { type CommandHelp, commandHelp, overview, suggestion } from "./help.js";
import { errorsAsJson, fail, GLOBAL_OPTIONS } from "./options.js";

// V8's code cache for the chunks loaded from here on (Node 22.1 and later;
// absent on Node 20): a later start skips parsing them again.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// Modules that hold several commands: one loader each.
const messages = () => import("./messages.js");
const watch = () => import("./watch.js");
const inbox = () => import("./inbox.js");
const reservation = () => import("./reserve.js");

/** Every command, its group module, and one line of help. */
export const COMMANDS: Record<
  string,
  CommandHelp & {
    group: () => Promise<Record<string, Command>>;
    /** Greets as the calling session with its derived meta (see main). */
    asSession?: true;
    /** Reads `--sid` itself (see sidFlagResolved). */
    ownSid?: true;
  }
> = {
  daemon: {
    group: () => import("./daemon.js"),
    help: "daemon run|start|stop|status|restart — manage the instance",
    more: [
      "  run      serve in the foreground until Ctrl-C or SIGTERM",
      "  start    start one in the background (nothing to do when one runs)",
      "  stop     stop it gracefully: nothing acknowledged is lost",
      "  status   whether one runs, its pid, socket and HTTP address",
      "  restart  stop, then start",
      "  --http host:port|0|off  where HTTP and the WebSocket listen (run, start, restart)",
    ].join("\n"),
  },
  passkey: {
    group: () => import("./passkey.js").then((m) => ({ passkey: m.passkey })),
    help: "passkey add|list|remove — people who may use the console from anywhere",
    more: [
      "  add [--name label]  print a one-time registration URL and its 6-digit code (10 minutes)",
      "  list                the registered passkeys",
      "  remove <sub>        remove a person's passkeys, end their sessions and tokens",
      "Also spelled `ccmsg daemon passkey add|list|remove [unit] …`.",
    ].join("\n"),
  },
  mesh: {
    group: () => import("./mesh.js"),
    help: "mesh add|list|remove — the instances this one links with",
    more: [
      "  add <endpoint> [--id <id>]  trust and dial another instance (both must add each other)",
      "  list                        each peer: id, endpoint, host, reachable, linked since or last error",
      "  remove <endpoint|id>        stop trusting a peer; its link closes",
      "Edits <state dir>/mesh.json (through the running instance when one runs); the config file's",
      "mesh.endpoints list is trusted as well.",
    ].join("\n"),
  },
  ping: {
    group: () => import("./ping.js"),
    help: "ping — health of the instance",
    more: "Its id, version, pid, uptime, connected clients and HTTP address.",
  },
  open: {
    group: () => import("./open.js"),
    help: "open [--print] — open the web console in a browser, signed in",
    more: [
      "Makes a one-time link (valid 2 minutes, once) that gives a browser the owner's cookie",
      "and lands it on the console; on a terminal it opens a browser when one is found.",
      "  --print   only print the link",
    ].join("\n"),
  },
  hello: {
    group: messages,
    help: "hello [--hook] — greet the instance as this session",
    more: [
      "Announces where the session works; repo, ws, branch and repo_root come from git",
      "in the session's directory (CLAUDE_PROJECT_DIR, else the current directory).",
      "  --hook    read Claude Code's SessionStart payload on stdin; never fails the hook",
      "  --cwd d, --repo r, --ws w, --repo-root d, --branch b, --transcript-path p,",
      "  --title t  state a field instead of deriving it",
    ].join("\n"),
  },
  stopping: {
    group: messages,
    help: "stopping [--reason r] [--hook] — declare this session is stopping",
    more: "Its disconnection then reads as a pause, not a loss. --hook reads the SessionEnd payload.",
  },
  post: {
    group: messages,
    asSession: true,
    help: "post <sid> <text> [--wait seen[:timeout]] — send a message to a session",
    more: [
      "Answers delivered, or held and why (preparing, paused, disappeared, throttled, inbox_full).",
      "  --wait seen[:timeout]  then wait until the recipient's transcript shows its model got it",
      "                         (default 120 s; e.g. seen:30s) and print the receipt; exit 1",
      "                         with a line on stderr when it was not seen in time",
    ].join("\n"),
  },
  reply: {
    group: messages,
    asSession: true,
    help: "reply <mid> [--to <sid>] <text> [--wait seen[:timeout]] — answer a delivered message",
    more: [
      "Without --to the answer goes to the person: kept in their inbox (ccmsg notifications)",
      "linked to the message it answers, and shown as a notification about this session.",
      "  --wait seen[:timeout]  (with --to) wait for the receipt, as `post` does",
    ].join("\n"),
  },
  sent: {
    group: () => import("./receipts.js").then((m) => ({ sent: m.sent })),
    asSession: true,
    help: "sent [--limit n] — recent messages this session sent, and whether their models saw them",
    more: [
      "As the person, every recent message. States: held, delivered, seen (in the model's input,",
      "by the recipient's transcript), read (the model answered after it), unseen, dropped.",
    ].join("\n"),
  },
  notify: {
    group: messages,
    asSession: true,
    help: "notify <text> [--about <sid>] — a line for the person watching",
    more: [
      "Sent by a session about itself: run it inside a session (or with --sid).",
      "A person names the session the line is about with --about <sid>.",
    ].join("\n"),
  },
  attention: {
    group: () => import("./attention.js"),
    help: "attention [--all] | attention allow|deny <id> — permission prompts and questions waiting on you",
    more: [
      "What sessions wait on you for, oldest first (DR-0062): a tool call Claude Code asks",
      "permission for, or a question it asks you. The dialog stays up in the session's terminal",
      "meanwhile; whichever answer comes first wins, and a late one is refused with the reason.",
      "  --all                    every kept item, with how it ended",
      "  allow <id> [--always]    let it run (--always: with Claude Code's own suggestion)",
      "  allow <id> --answer q=l  answer a question: the option label for each question",
      "  deny <id> [--message m]  refuse; the model receives the message",
      "  --hook [--harness codex] the PermissionRequest hook: reads its payload on stdin, asks",
      "                           the instance and prints the person's answer (none: the dialog)",
    ].join("\n"),
  },
  notifications: {
    group: () => import("./notifications.js"),
    help: "notifications [--unread] | notifications read <id…>|--all — what sessions told you, kept",
    more: [
      "The person's inbox, newest first: every notification and every reply to a person's",
      "message, kept 7 days (the newest 1,000), each with its time, session, text and the mid",
      "it answers; ● marks the unread. The person's alone: inside a session it is refused.",
      "  --unread        only the unread ones",
      "  --limit n       how many (50; at most 200)",
      "  read <id…>      mark these read (the numbers after #)",
      "  read --all      mark every one read",
    ].join("\n"),
  },
  inbox: {
    group: inbox,
    asSession: true,
    help: "inbox [--hook] — take the messages held for this session",
    more: [
      "What is printed has left the inbox. Needs a session: run it inside one or pass --sid.",
      "  --hook   Claude Code's UserPromptSubmit hook: read its payload on stdin and print the",
      "           held messages that fit 10,000 characters as additionalContext (the rest stay",
      "           held); prints nothing when none is held, never fails the prompt",
    ].join("\n"),
  },
  wait: {
    group: inbox,
    help: "wait [--hook] [--max-wait s] — wait for messages to this session",
    more: [
      "Prints them once they arrive; they count as delivered only once printed.",
      "  --hook       the waiter, run as an asyncRewake hook: reads the hook payload, writes the",
      "               messages to stderr and exits 2 (the session wakes); exits 0 in silence when",
      "               a newer waiter takes over, the session stops, or before --max-wait",
      "  --max-wait   seconds to wait at most (default: just under the hook's 24 h timeout)",
    ].join("\n"),
  },
  peers: { group: watch, asSession: true, help: "peers — sessions live now and lately lost" },
  agents: {
    group: watch,
    help: "agents — the sessions the harness's own files say run here",
    more: [
      "Each with its pid, status (and what it waits on), kind, tmux pane, directory and name,",
      "read from the config home's sessions/ state files (Claude Code). Always as the person.",
    ].join("\n"),
  },
  subscribe: {
    group: watch,
    asSession: true,
    help: "subscribe <topic>… — stream topic frames as NDJSON",
    more: [
      "Topics: inbox, notify, peers, agents, work_items, kv:<ns>, session_status:<sid>, session_errors.",
      "When the instance restarts or goes away it reconnects (waiting longer each try,",
      "at most 2 s) and subscribes again; it never starts an instance itself.",
      "  --exit-on-restart  exit instead (status 0 on a restart, 1 on a lost connection)",
    ].join("\n"),
  },
  kv: {
    group: () => import("./kv.js"),
    asSession: true,
    help: "kv get|set|del|list — the shared key-value store",
    more: [
      "  get <ns> <key>            print a value",
      "  set <ns> <key> <value>    a value is JSON when it parses, else text (--string: always text)",
      "  del <ns> <key>            delete a key",
      "  list <ns>                 every key of a namespace",
      "A namespace is a lower-case letter then up to 63 lower-case letters, digits or _.",
    ].join("\n"),
  },
  reserve: {
    group: reservation,
    help: "reserve <glob…> --for 30m [--reason r] [--shared] — reserve files for this session",
    more: [
      "Tells other agents you are editing these paths (an extension, stored in KV namespace",
      "reservations). Globs are resolved against the current directory: ** any number of",
      "directories, * and ? within one name; a directory reserves everything below it.",
      "Refused (file_conflict, nothing written) when another session's reservation overlaps;",
      "reserving the same glob again renews it. As the session (--sid) or else the person.",
      "  --for d      how long: 90s, 30m, 2h, 1h30m (at most 30d); it then expires by itself",
      "  --reason r   shown to whoever runs into it",
      "  --shared     only exclusive reservations of others conflict (and others may share it)",
      "  --force      reserve despite a conflict (the overlaps are printed as warnings)",
    ].join("\n"),
  },
  release: {
    group: reservation,
    help: "release <glob…> | --all — give back your reservations",
  },
  reservations: {
    group: reservation,
    help: "reservations [check <path>…] — live file reservations; would an edit step into one?",
    more: [
      "  check <path>…   exit 1 (file_conflict) when another holder reserved a path exclusively",
      "  check --hook    Claude Code's PreToolUse hook (Edit, Write, MultiEdit, NotebookEdit):",
      "                  warns the model, or blocks the edit with config",
      '                  reservations.on_conflict "block"; allows in silence when no instance answers',
    ].join("\n"),
  },
  board: {
    group: () => import("./board.js"),
    help: "board add|list|show|claim|move|update|sync — the work board",
    more: [
      "  add --title t [--priority p] [--status s] [--owner o] [--url u] …",
      "  list [--lane ready|running|blocked|done] [--limit n]",
      "  show <id> | claim [<id>] [--owner o] [--as agent|human] | move <id> <lane>",
      "  update <id> [--title …]      --db PATH reads another board file",
      "  --store postgres://…         the team board in PostgreSQL (else the config's store)",
      "  sync github [--repo owner/name]   open PRs and issues through gh (or node $ECC_GH_SHIM)",
      "  sync linear [--project name|id]   a Linear project's issues (API key from LINEAR_API_KEY)",
      "    [--create title]                 create an issue in it first (records issue capacity)",
    ].join("\n"),
  },
  store: {
    group: () => import("./store.js"),
    help: "store migrate --to postgres://… — copy the board and KV into PostgreSQL",
    more: [
      "  migrate --to URL [--db PATH]  copy every work item, check run and KV entry, in one",
      "                                transaction; running it again changes nothing",
    ].join("\n"),
  },
  status: {
    group: () => import("./status.js"),
    help: "status [--json|--markdown] [--exit-code] — readiness summary",
    more: [
      "  --write PATH  also write what is printed (with --json or --markdown)",
      "  --exit-code   exit 2 when it needs attention;  --limit N  items per list (5)",
      "  --db PATH     read another state file",
    ].join("\n"),
  },
  hud: {
    group: () => import("./hud.js"),
    help: "hud [--sid s] — the ecc.hud-status.v1 payload for a session",
    more: [
      "The session: --sid, else the one this runs inside, else the most recently active.",
      "  --write PATH  also write what is printed",
    ].join("\n"),
  },
  "loop-status": {
    group: () => import("./loop-status.js").then((m) => ({ "loop-status": m.loopStatusCommand })),
    help: "loop-status [--json] [--exit-code] [--write-dir DIR] — attention signals of long-running sessions",
    more: [
      "ECC's ecc.loop-status.v1 from the newest transcripts under the Claude Code config home's",
      "projects/ (CLAUDE_CONFIG_DIR honoured): a Bash call with no result past the timeout, a",
      "scheduled wake-up that is overdue, lines that do not parse.",
      "  --home d                   scan <d>/.claude/projects instead",
      "  --transcript f             this transcript (repeatable; no scan)",
      "  --limit n (10)  --bash-timeout-seconds n (1800)  --wake-grace-multiplier n (2)",
      "  --now t                    ISO time, epoch ms or now",
      "  --exit-code                exit 2 when a session needs attention, 1 on unreadable transcripts",
      "  --watch [--watch-count n] [--watch-interval-seconds n (5)]   repeat",
      "  --write-dir DIR            also write <session>.json files and index.json there",
    ].join("\n"),
  },
  "session-inspect": {
    group: () =>
      import("./session-inspect.js").then((m) => ({ "session-inspect": m.sessionInspect })),
    help: "session-inspect <target> [--write PATH] — one session as ecc.session.v1",
    more: [
      "Targets: claude:latest, claude:<id|alias>, a .tmp session file (ECC's session-data/),",
      "or a session id (its transcript; sub-agents and teammates are its workers).",
      'Exit 1 with "No Claude session history found" when there is none.',
      "  --write PATH        also write the JSON there",
      "  --adapter id        claude-history or ccmsg;  --list-adapters  list them",
    ].join("\n"),
  },
  statusline: {
    group: () => import("./statusline.js"),
    help: "statusline — one compact line from the harness's statusline JSON",
    more: [
      "Claude Code's statusLine command: reads its JSON on stdin, prints one line, always",
      "exits 0 (an empty line on any failure). NO_COLOR=1 drops the colours.",
    ].join("\n"),
  },
  check: {
    group: () => import("./check.js"),
    help: "check run — run the local checks the config declares",
    more: [
      "  --name n  run only that check. Results are kept for the HUD; exit 1 when one fails.",
      "  --store postgres://…  keep them in the team store (else the config's store, else the file)",
    ].join("\n"),
  },
  session: {
    group: () => import("./session.js"),
    ownSid: true,
    help: "session diff|pr|stop|resume|create — session controls",
    more: [
      "  diff                       the worktree's changes",
      "  pr                         the branch's pull request (gh)",
      "  stop [<sid>] [--force] [--reason r]",
      "                             stop a running session (SIGINT, then SIGTERM; --force",
      "                             adds SIGKILL); inside the session itself: declare it done",
      "  resume [<sid>]             reattach in a new tmux window, else print the command",
      "  create <name> [--base ref] a new worktree on a new branch beside the repository",
    ].join("\n"),
  },
  mcp: {
    group: () => import("./mcp.js"),
    help: "mcp [--print-config claude|codex] — the MCP server (stdio) for this session",
    more: [
      "Tools send, reply, peers, inbox, notify, kv_get, kv_set, reserve, release, board_list,",
      "board_claim, board_move, status, hud — as the session from the environment (or --sid).",
      "  --print-config claude   the .mcp.json entry;  codex   the config.toml table",
    ].join("\n"),
  },
  plugin: {
    group: () => import("./plugin.js"),
    help: "plugin install|status|uninstall claude|codex — wire ccmsg into Claude Code or Codex",
    more: [
      "  install    Claude Code: generate the plugin (hooks, skill, MCP server) under",
      "             <state dir>/plugins/claude and register it with `claude plugin …`",
      "             (or print the commands). Codex: merge ccmsg's hooks into",
      "             $CODEX_HOME/hooks.json, add the skill and [mcp_servers.ccmsg].",
      "  status     what is wired and what is broken (exit 2 when something is)",
      "  uninstall  take out exactly what install added; untouched files come back byte for byte",
      "  --dry-run  print what would change and change nothing",
      "  --allow-tools / --no-allow-tools  (install claude) add, or take out, allow rules",
      "             for ccmsg's own commands and MCP tools, so they run without a prompt;",
      "             asked on a terminal. --scope user|project|local picks the settings file",
    ].join("\n"),
  },
  dump: {
    group: () => import("./dump.js"),
    help: "dump <sid> [--preset p] [--types a,b,-c] — write a session's typed transcript to a file",
    more: [
      "Writes a SessionDumpFile (JSON) under <state dir>/dumps/ on the instance's host and",
      "prints its path, the items per type and the ids they mention. As the person.",
      "  --preset p      a configured selection (ccmsg config key dump_presets) as the base",
      "  --types a,b,-c  item types or prefixes, applied left to right; -x removes, @p expands",
      "                  a preset; without any, everything except system:attachment:*",
      "  --agent id      dump one sub-agent of the session instead",
      "  --no-thinking   leave thinking out;  --no-agent  leave sub-agent traffic out",
    ].join("\n"),
  },
  launch: {
    group: () => import("./launch.js"),
    help: "launch [<dir>] [--template t] [--param NAME=value]… — start a session through the launcher",
    more: [
      "Runs a template of the launcher (ccmsg config key launcher) in <dir> (default: here),",
      "which must lie under one of its roots; in a new window of its tmux session when tmux",
      "is installed. Prints what the launch printed; exit 1 when it failed or timed out.",
      "  --template t    a configured template (default: the first)",
      "  --param N=v     a template parameter (repeatable), e.g. PROMPT=…, NAME=…, WORKTREE=<branch>",
      "  --command c     run this shell program instead of the template's",
      "  --list          the roots and the templates, with their commands and parameters",
    ].join("\n"),
  },
  search: {
    group: () => import("./search.js"),
    ownSid: true,
    help: "search <query> [--sid s] [--since t] [--type t] — find what any session said, sent or raised",
    more: [
      "Every message, notification and typed transcript item, from the instance's search index.",
      'Words, "phrases", prefix*, AND / OR / NOT and ( ) — every other character is plain text.',
      "  --sid s     one session (an id prefix will do, or @title): its items and messages from or to it",
      "  --since t   30m, 2h, 7d, a date (2026-11-30) or ms since the epoch",
      "  --type t    an item type or a prefix of it: message, tool, tool:Bash, notification",
      "  --limit n   results (20; at most 200), the best-ranked of the newest 1000 matches",
    ].join("\n"),
  },
  gateway: {
    group: () => import("./gateway.js"),
    help: "gateway [--listen host:port] [--upstream url] — LLM pass-through that reports busy, cost and cache",
    more: [
      "Forwards Anthropic Messages API requests unchanged (streams included) and tells the",
      "instance of its state dir what it saw, as webhook source llm.gateway.source (default",
      "local; its token in llm.sources). Point a session at it: ANTHROPIC_BASE_URL=http://host:port",
      "  --listen h:p    where it listens (llm.gateway.listen; default 127.0.0.1:7078)",
      "  --upstream url  where it forwards (llm.gateway.upstream; default https://api.anthropic.com)",
      "gateway env [--listen h:p] [--json] — `export ANTHROPIC_BASE_URL=…` for a shell",
      '  (eval "$(ccmsg gateway env)"), printed only while something listens there',
    ].join("\n"),
  },
  queue: {
    group: () => import("./queue.js"),
    help: "queue merge|conflict — merge and conflict queues",
    more: "The HUD's queues, from the work board and the repository's worktrees.",
  },
};

/** Where a failure is reported from (`ccmsg <command>: …`). */
let current: string | undefined;

async function main(argv: string[]): Promise<void> {
  const { leading, name, rest } = splitLeading(argv);
  const asksHelp = leading.some(isHelp) || optionsOf(rest).some(isHelp);
  if (name === undefined || (name === "help" && rest.length === 0)) {
    process.stdout.write(`${overview(COMMANDS)}\n`);
    return;
  }
  if (name === "-v" || name === "--version" || name === "version") {
    process.stdout.write(`ccmsg ${VERSION}\n`);
    return;
  }
  if (name === "help") {
    process.stdout.write(`${commandHelp(lookup(rest[0]!))}\n`);
    return;
  }
  if (name.startsWith("-")) throw new UsageError(`unknown option ${name}`);
  const entry = lookup(name);
  current = name;
  // `--help` anywhere before `--` shows the help and runs nothing.
  if (asksHelp) {
    process.stdout.write(`${commandHelp(entry)}\n`);
    return;
  }
  const args = await sidFlagResolved(withLeading(rest, leading), entry);
  // The session's meta: read from the repository's files, or, where git must
  // say, two git processes; start it now, beside loading the command, rather
  // than on its way to the greeting.
  if (entry.asSession && sessionIdFrom(sidFlag(args)) !== undefined)
    void import("../client/session-meta.js").then((m) => m.derivedMeta());
  // The instance is a bundle of its own (DR-0064): a restart loads none of
  // the `daemon` group's client code.
  if (name === "daemon" && args[0] === "run")
    return (await import("./daemon-run.js")).runDaemon(args.slice(1));
  const group = await entry.group();
  await group[name]!(args);
}

function lookup(name: string): (typeof COMMANDS)[string] {
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (entry !== undefined) return entry;
  const near = suggestion(name, Object.keys(COMMANDS));
  throw new UsageError(
    `unknown command "${name}"${near === undefined ? "" : ` — did you mean "${near}"?`} (ccmsg help lists every command)`,
  );
}

/**
 * The arguments with `--sid` as a whole sid: a prefix or a title names a
 * session like any sid argument (sid-args.ts; a whole sid costs nothing). A
 * hook's is passed on as given, as a hook must not fail on it; a command whose
 * `--sid` is more than a session (search's filter, session's target) reads it
 * itself.
 */
async function sidFlagResolved(
  args: string[],
  entry: (typeof COMMANDS)[string],
): Promise<string[]> {
  const options = optionsOf(args);
  const typed = sidFlag(args);
  if (typed === undefined || typed === "" || entry.ownSid || options.includes("--hook"))
    return args;
  const { sidArg } = await import("./sid-args.js");
  const sid = await sidArg(globalFlags(options), typed, "the session (--sid)");
  const at = options.findIndex((a) => a === "--sid" || a.startsWith("--sid="));
  const out = [...args];
  if (out[at] === "--sid") out[at + 1] = sid;
  else out[at] = `--sid=${sid}`;
  return out;
}

/** The options every command takes, read ahead of the command's own parsing
 * (loosely: the command's own options are its business). */
function globalFlags(options: string[]): Flags {
  return parseArgs({
    args: options,
    options: GLOBAL_OPTIONS,
    strict: false,
    allowPositionals: true,
  }).values as Flags;
}

/** The value of `--sid`, read ahead of the command's own parsing. */
function sidFlag(args: string[]): string | undefined {
  const options = optionsOf(args);
  const i = options.indexOf("--sid");
  if (i >= 0) return options[i + 1];
  return options.find((a) => a.startsWith("--sid="))?.slice("--sid=".length);
}

function isHelp(arg: string): boolean {
  return arg === "--help" || arg === "-h";
}

/** The arguments before `--` (after it, everything is text). */
function optionsOf(args: string[]): string[] {
  const end = args.indexOf("--");
  return end === -1 ? args : args.slice(0, end);
}

/** Options every command takes may also come before the command
 * (`ccmsg --state-dir d --json ping`): they are split off here and handed to
 * the command with its own arguments. */
function splitLeading(argv: string[]): { leading: string[]; name?: string; rest: string[] } {
  const leading: string[] = [];
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    const key = arg.startsWith("--") ? arg.slice(2).split("=")[0]! : arg === "-h" ? "help" : "";
    const spec = (GLOBAL_OPTIONS as Record<string, { type: string }>)[key];
    if (spec === undefined) break;
    leading.push(arg);
    if (spec.type === "string" && !arg.includes("=")) {
      const value = argv[++i];
      if (value === undefined) throw new UsageError(`${arg} needs a value`);
      leading.push(value);
    }
  }
  return { leading, name: argv[i], rest: argv.slice(i + 1) };
}

/** A command's arguments with the leading options added before any `--`
 * (commands read their verb first, so the options go after it). */
function withLeading(rest: string[], leading: string[]): string[] {
  if (leading.length === 0) return rest;
  const end = rest.indexOf("--");
  return end === -1
    ? [...rest, ...leading]
    : [...rest.slice(0, end), ...leading, ...rest.slice(end)];
}

const argv = process.argv.slice(2);
main(argv).catch((error) => fail(error, errorsAsJson(argv), current));
