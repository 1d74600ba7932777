import { homedir } from "node:os";
import { join } from "node:path";

// Where things live (ARCHITECTURE "Default places"). One place for these facts:
// the instance, the CLI and the tests all resolve through here.

type Env = Record<string, string | undefined>;

/** `--state-dir`, else `CCMSG_STATE_DIR`, else `$XDG_STATE_HOME/ccmsg` (or
 * `~/.local/state/ccmsg`). */
export function resolveStateDir(explicit: string | undefined, env: Env = process.env): string {
  if (explicit) return explicit;
  if (env.CCMSG_STATE_DIR) return env.CCMSG_STATE_DIR;
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), ".local", "state");
  return join(base, "ccmsg");
}

export const stateFiles = (stateDir: string) => ({
  socket: join(stateDir, "ccmsg.sock"),
  database: join(stateDir, "ccmsg.db"),
  instanceId: join(stateDir, "instance.id"),
  instanceJson: join(stateDir, "instance.json"),
  lock: join(stateDir, "instance.lock"),
  log: join(stateDir, "daemon.log"),
  /** The owner credential a TCP client presents (mode 0600). */
  ownerSecret: join(stateDir, "owner.secret"),
  /** `ccmsg open`'s redirect page, so the one-time link never sits in a
   * browser's command line where other accounts could read it. */
  openPage: join(stateDir, "open.html"),
  /** The last statusline input per session (`<sid>.json`), for the HUD. */
  statusline: join(stateDir, "statusline"),
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

/** The Claude Code config home: `CLAUDE_CONFIG_DIR`, else `~/.claude`. */
export function claudeConfigHome(env: Env = process.env): string {
  return env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), ".claude");
}
