import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// Stand-ins for what the launcher starts (issue 12's acceptance): a `tmux`
// that opens "windows" by running their command in the background, in the
// directory asked, and a `claude` that behaves as Claude Code does for
// presence — it writes `<config home>/sessions/<pid>.json` (harness.md §5.1)
// naming the session id it was given, and keeps running until signalled.

/** A fake `tmux`: logs each call's argv (one JSON array a line), keeps its
 * sessions as marker files, and runs a window's command detached in its `-c`
 * directory with the tmux variables a real pane has. */
const FAKE_TMUX = (state: string) => `#!${process.execPath}
const fs = require("node:fs"), path = require("node:path"), { spawn } = require("node:child_process");
const state = ${JSON.stringify(state)};
const argv = process.argv.slice(2);
fs.appendFileSync(path.join(state, "tmux.log"), JSON.stringify(argv) + "\\n");
const [cmd, ...rest] = argv;
const opts = {}; let i = 0;
for (; i < rest.length; i++) {
  const a = rest[i];
  if (["-d", "-P"].includes(a)) opts[a] = true;
  else if (["-s", "-F", "-c", "-t", "-e"].includes(a)) opts[a] = rest[++i];
  else break;
}
const command = rest.slice(i);
const marker = (name) => path.join(state, "session-" + name.replace(/^=/, "").replace(/:$/, ""));
if (cmd === "has-session") {
  if (fs.existsSync(marker(opts["-t"]))) process.exit(0);
  process.stderr.write("can't find session: " + opts["-t"] + "\\n");
  process.exit(1);
}
if (cmd === "new-session" || cmd === "new-window") {
  const name = cmd === "new-session" ? opts["-s"] : opts["-t"].replace(/^=/, "").replace(/:$/, "");
  if (cmd === "new-session") fs.writeFileSync(marker(name), "0");
  const windows = Number(fs.readFileSync(marker(name), "utf8"));
  fs.writeFileSync(marker(name), String(windows + 1));
  const counter = path.join(state, "panes");
  const pane = fs.existsSync(counter) ? Number(fs.readFileSync(counter, "utf8")) + 1 : 1;
  fs.writeFileSync(counter, String(pane));
  const child = spawn(command[0], command.slice(1), {
    cwd: opts["-c"], detached: true, stdio: "ignore",
    env: { ...process.env, TMUX: path.join(state, "server") + ",1,0", TMUX_PANE: "%" + pane },
  });
  fs.appendFileSync(path.join(state, "pids"), child.pid + "\\n");
  child.unref();
  if (opts["-P"]) process.stdout.write(name + ":" + windows + " %" + pane + "\\n");
  process.exit(0);
}
`;

/** A fake `claude`: its state file and a record of how it was started
 * (argv, cwd, a few variables) in `<config home>/fake-claude/<pid>.json`. */
const FAKE_CLAUDE = `#!${process.execPath}
const fs = require("node:fs"), path = require("node:path"), { randomUUID } = require("node:crypto");
const home = process.env.CLAUDE_CONFIG_DIR;
const args = process.argv.slice(2);
const at = args.indexOf("--session-id");
const sid = at >= 0 ? args[at + 1] : randomUUID();
const stat = fs.readFileSync("/proc/self/stat", "utf8");
const procStart = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
const env = {};
for (const k of ["CLAUDE_CONFIG_DIR", "CLAUDECODE", "CLAUDE_CODE_SESSION_ID", "CCMSG_LAUNCH_SID", "PROMPT", "NAME", "WORKTREE", "GREETING", "TMUX_PANE"])
  if (process.env[k] !== undefined) env[k] = process.env[k];
fs.mkdirSync(path.join(home, "fake-claude"), { recursive: true });
fs.writeFileSync(path.join(home, "fake-claude", process.pid + ".json"), JSON.stringify({ argv: args, cwd: process.cwd(), env }));
const sessions = path.join(home, "sessions");
fs.mkdirSync(sessions, { recursive: true });
const file = path.join(sessions, process.pid + ".json");
const row = { pid: process.pid, sessionId: sid, cwd: process.cwd(), kind: "interactive", startedAt: Date.now(), procStart, status: "idle", version: "fake" };
if (process.env.TMUX_PANE) row.tmux = "ccmsg:@1." + process.env.TMUX_PANE;
fs.writeFileSync(file, JSON.stringify(row));
const end = () => { try { fs.unlinkSync(file); } catch {} process.exit(0); };
process.on("SIGTERM", end); process.on("SIGINT", end); process.on("SIGHUP", end);
setInterval(() => {}, 1e9);
`;

export interface FakeLaunchTools {
  /** A directory to put first on PATH: `tmux` (unless left out) and `claude`. */
  bin: string;
  /** Every tmux call's argv, in order. */
  tmuxCalls(): string[][];
  /** The fake claude processes started so far, as they recorded themselves. */
  claudes(configHome: string): FakeClaudeRun[];
  /** Every process the fake tmux started (to end them after a test). */
  pids(): number[];
}

export interface FakeClaudeRun {
  pid: number;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

export function fakeLaunchTools(options: { tmux?: boolean } = {}): FakeLaunchTools {
  const bin = mkdtempSync(join(tmpdir(), "ccmsg-launch-bin-"));
  const state = join(bin, ".state");
  mkdirSync(state);
  if (options.tmux !== false) {
    writeFileSync(join(bin, "tmux"), FAKE_TMUX(state));
    chmodSync(join(bin, "tmux"), 0o755);
  }
  writeFileSync(join(bin, "claude"), FAKE_CLAUDE);
  chmodSync(join(bin, "claude"), 0o755);
  const lines = (file: string) =>
    existsSync(file)
      ? readFileSync(file, "utf8")
          .split("\n")
          .filter((l) => l !== "")
      : [];
  return {
    bin,
    tmuxCalls: () => lines(join(state, "tmux.log")).map((l) => JSON.parse(l) as string[]),
    claudes(configHome) {
      const dir = join(configHome, "fake-claude");
      if (!existsSync(dir)) return [];
      return readdirSync(dir).map((name) => ({
        pid: Number.parseInt(name, 10),
        ...(JSON.parse(readFileSync(join(dir, name), "utf8")) as Omit<FakeClaudeRun, "pid">),
      }));
    },
    pids: () => lines(join(state, "pids")).map(Number),
  };
}
