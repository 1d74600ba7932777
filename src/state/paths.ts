import { existsSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { sha256Hex } from "../util/sha256.js";

// Where things live (ARCHITECTURE "Default places"). One place for these facts:
// the instance, the CLI and the tests all resolve through here.

type Env = Record<string, string | undefined>;

/**
 * The config home whose instance this process belongs to (harness.md §1, §8):
 * the harness that claims the process decides, and Codex wins when both
 * claim it (a Codex session started inside Claude Code inherits Claude's
 * variables, not the other way round). Unclaimed, it is Claude Code's.
 */
export function configHome(env: Env = process.env): string {
  if (claimingHarness(env) === "codex") return resolve(codexConfigHome(env));
  return resolve(claudeConfigHome(env));
}

/** The harness that claims this process (see `configHome`). */
export function claimingHarness(env: Env = process.env): "claude" | "codex" {
  return env.CODEX_THREAD_ID || env.CODEX_SESSION_ID ? "codex" : "claude";
}

/** `<basename of the config home>-<first 8 hex of sha256 of its path>`. */
export function instanceKey(home: string): string {
  return `${basename(home)}-${sha256Hex(home).slice(0, 8)}`;
}

/**
 * `--state-dir`, else `CCMSG_STATE_DIR`, else one directory per config home:
 * `$XDG_STATE_HOME/ccmsg/<key>` (or `~/.local/state/ccmsg/<key>`). One instance
 * serves exactly one config home.
 *
 * Before instances were keyed by config home, the default was
 * `$XDG_STATE_HOME/ccmsg` itself. A user of the default Claude Code home who
 * has a store there keeps it (docs/07-configuration.md, "Default places", says how to move).
 */
export function resolveStateDir(explicit: string | undefined, env: Env = process.env): string {
  if (explicit) return explicit;
  if (env.CCMSG_STATE_DIR) return env.CCMSG_STATE_DIR;
  const base = join(env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state"), "ccmsg");
  const home = configHome(env);
  const keyed = join(base, instanceKey(home));
  const defaultHome = resolve(join(env.HOME || homedir(), ".claude"));
  if (home === defaultHome && !existsSync(keyed) && existsSync(join(base, "ccmsg.db"))) return base;
  return keyed;
}

/** The longest socket path every platform takes (`sun_path` is 104 bytes on
 * macOS, with its terminating NUL). */
const MAX_SOCKET_PATH_BYTES = 103;

/** `<state dir>/ccmsg.sock`, or, when that path is too long for a Unix socket,
 * `<tmp>/ccmsg-<uid>/<16 hex of the state dir's sha256>/ccmsg.sock` (a
 * per-user 0700 directory the instance creates and checks). */
export function socketPath(stateDir: string): string {
  const inside = join(stateDir, "ccmsg.sock");
  if (Buffer.byteLength(inside) <= MAX_SOCKET_PATH_BYTES) return inside;
  const uid = process.getuid?.() ?? 0;
  const key = sha256Hex(resolve(stateDir)).slice(0, 16);
  return join(tmpdir(), `ccmsg-${uid}`, key, "ccmsg.sock");
}

export const stateFiles = (stateDir: string) => ({
  socket: socketPath(stateDir),
  database: join(stateDir, "ccmsg.db"),
  /** The search index (derived: rebuilt from the sources when lost; DR-0037). */
  search: join(stateDir, "search.db"),
  instanceId: join(stateDir, "instance.id"),
  instanceJson: join(stateDir, "instance.json"),
  lock: join(stateDir, "instance.lock"),
  log: join(stateDir, "daemon.log"),
  /** The owner credential a TCP client presents (mode 0600). */
  ownerSecret: join(stateDir, "owner.secret"),
  /** The mesh peers `ccmsg mesh add` added (mode 0600; DR-0047). */
  mesh: join(stateDir, "mesh.json"),
  /** `ccmsg open`'s redirect page, so the one-time link never sits in a
   * browser's command line where other accounts could read it. */
  openPage: join(stateDir, "open.html"),
  /** The last statusline input per session (`<sid>.json`), for the HUD. */
  statusline: join(stateDir, "statusline"),
  /** Transcript folds the CLI resumes from (harness/fold-cache.ts). */
  foldCache: join(stateDir, "fold-cache"),
  /** Typed transcript dumps (`session_dump_write`), 0700 / 0600. */
  dumps: join(stateDir, "dumps"),
});

/** ccmsg's own configuration: `CCMSG_CONFIG_DIR/config.json`, else
 * `$XDG_CONFIG_HOME/ccmsg/config.json` (or `~/.config/ccmsg/config.json`). */
export function configFile(explicit: string | undefined, env: Env = process.env): string {
  if (explicit) return explicit;
  if (env.CCMSG_CONFIG_DIR) return join(env.CCMSG_CONFIG_DIR, "config.json");
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return join(base, "ccmsg", "config.json");
}

/** The default HTTP / WebSocket / web console address: loopback only. */
export const DEFAULT_HTTP = "127.0.0.1:7077";

/** The Codex config home: `CODEX_HOME`, else `~/.codex`. */
export function codexConfigHome(env: Env = process.env): string {
  return env.CODEX_HOME || join(env.HOME || homedir(), ".codex");
}

/** The Claude Code config home: `CLAUDE_CONFIG_DIR`, else `~/.claude`. */
export function claudeConfigHome(env: Env = process.env): string {
  return env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), ".claude");
}
