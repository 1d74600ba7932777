import { type CcmsgConfig, loadConfig } from "../config.js";
import { stateFiles } from "../paths.js";
import type { ControlFacts } from "./controls.js";
import { onPath } from "./exec.js";
import type { GitProbe } from "./git.js";
import type { GhState } from "./github.js";
import { openStoreReader, type StoreReader } from "./store-reader.js";
import { resolveTarget, type Target } from "./target.js";

// Everything the HUD and the session controls start from: the config, the
// store (read-only), and the target session with its directory.

export interface Places {
  stateDir: string;
  configPath: string;
  /** `--sid`, when given. */
  flagSid?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface SessionContext {
  stateDir: string;
  configPath: string;
  config: CcmsgConfig;
  reader: StoreReader | undefined;
  target: Target;
  env: NodeJS.ProcessEnv;
}

export async function openSessionContext(p: Places): Promise<SessionContext> {
  const env = p.env ?? process.env;
  const config = loadConfig(p.configPath);
  const files = stateFiles(p.stateDir);
  const reader = await openStoreReader(files.database);
  const target = resolveTarget(p.flagSid, reader?.sessions, files.statusline, env, p.cwd);
  return { stateDir: p.stateDir, configPath: p.configPath, config, reader, target, env };
}

/** The facts `controls.ts` decides on, for this context. */
export function controlFacts(ctx: SessionContext, git: GitProbe, gh?: GhState): ControlFacts {
  return {
    target: ctx.target.sid,
    caller: ctx.target.caller,
    harness: ctx.target.harness,
    cwd: ctx.target.cwd,
    cwdKnown: ctx.target.cwdKnown,
    git,
    gh,
    claude: onPath("claude", ctx.env) !== undefined,
    store: ctx.reader !== undefined,
  };
}
