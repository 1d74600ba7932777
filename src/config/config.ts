import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { ContractError } from "../contract/errors.js";
import { presetProblems } from "../contract/transcript-select.js";
import type { DumpPreset } from "../contract/transcripts.js";
import { isAddressEntry } from "../net/address-list.js";
import { isPostgresUrl } from "../store/pg/url.js";
import { checkLauncher, type LauncherConfig } from "./launcher.js";
import { checkLlm, type LlmConfig } from "./llm.js";
import { checkMesh, type MeshConfig } from "./mesh.js";

// ccmsg's own configuration file (`configFile()` in paths.ts). It is small and
// hand-written, so it is checked by hand: a typo must fail loudly, naming the
// file and the key, rather than silently switching a feature off.

export interface CheckConfig {
  name: string;
  command: string;
}

export interface CcmsgConfig {
  /** Local checks `ccmsg check run` executes with `sh -c` in the repository root. */
  checks?: CheckConfig[];
  /** The session budget the HUD compares spend against. */
  budget_usd?: number;
  /** The durable Markdown handoff file (may start with `~`). */
  handoff_path?: string;
  /** Linear tracking; only `project` is read today. */
  linear?: { project?: string };
  /** Route (a): write messages straight into the recipient harness (its
   * messaging socket, or `codex queue`). On unless `false`. */
  direct_delivery?: boolean;
  /** The `codex` executable route (a) runs for Codex (default: `codex` on PATH). */
  codex_command?: string;
  /** A shell call pending longer than this is stale (HUD; default 1800 s). */
  stale_bash_seconds?: number;
  /** A session quiet this long with unmerged work is up for salvage (HUD's
   * stale-salvage queue; default 3600 s). */
  quiet_session_seconds?: number;
  /** Named item selections for dumps and typed reads (contract §10.6), in
   * order; they replace the built-in presets. */
  dump_presets?: DumpPreset[];
  /** How long one `session_search` may walk transcripts (ms, default 5000). */
  search_budget_ms?: number;
  /** Where new sessions may start and the templates that start them
   * (launcher-config.ts); the `launcher` capability is offered with it. */
  launcher?: LauncherConfig;
  /** File reservations (DR-0041): what the PreToolUse hook does with an edit
   * inside another session's exclusive reservation (default "warn"). */
  reservations?: { on_conflict?: "warn" | "block" };
  /** The board's syncs (`ccmsg board sync`); with `interval_seconds` the
   * instance also runs them on that interval (DR-0040). */
  sync?: SyncConfig;
  /** LLM-gateway webhook sources, `ccmsg gateway` and the price table
   * (llm-config.ts); `llm_events` is offered when a source exists. */
  llm?: LlmConfig;
  /** The HTTP listener beyond loopback (DR-0044). */
  http?: HttpConfig;
  /** The board's store: a `postgres://` URL puts work items in PostgreSQL,
   * shared by every instance naming it (DR-0046). Default: the instance's
   * own SQLite file. */
  store?: string;
  /** The instances this one links with (mesh-config.ts, DR-0047), besides
   * those `ccmsg mesh add` put in `<state dir>/mesh.json`. */
  mesh?: MeshConfig;
  /** The attention queue (DR-0062): how long a hook is held for a decision
   * while the person is away (Claude Code's default 600 s, Codex's 60 s:
   * Codex's dialog waits on the hook), and how recent their input at the
   * terminal must be for them to count as there (default 60 s; 0: never). */
  attention?: { hold_seconds?: number; codex_hold_seconds?: number; at_terminal_seconds?: number };
}

export interface HttpConfig {
  /** The public base URL the console is reached at (a reverse proxy's, or
   * Tailscale Serve's): the passkeys' RP ID and Origin. Default: the bound
   * address as `http://localhost:<port>/` on loopback. */
  endpoint?: string;
  /** Peers whose `X-Forwarded-For` is believed (addresses or CIDR ranges). */
  trusted_proxies?: string[];
  /** When set, only these client addresses (or CIDR ranges) are answered;
   * everyone else gets 403 before anything else is looked at. */
  source_ips?: string[];
}

export interface SyncConfig {
  github?: { repo?: string; interval_seconds?: number };
  linear?: {
    /** The project's name or id (else `linear.project`). */
    project?: string;
    /** The GraphQL endpoint (default https://api.linear.app/graphql). */
    endpoint?: string;
    /** The environment variable holding the API key (default LINEAR_API_KEY). */
    token_env?: string;
    interval_seconds?: number;
  };
}

const KNOWN_KEYS = [
  "checks",
  "budget_usd",
  "handoff_path",
  "linear",
  "direct_delivery",
  "codex_command",
  "stale_bash_seconds",
  "quiet_session_seconds",
  "dump_presets",
  "search_budget_ms",
  "launcher",
  "reservations",
  "sync",
  "llm",
  "http",
  "store",
  "mesh",
  "attention",
];

/** Read and check the config; a missing file is the empty config. */
export function loadConfig(path: string): CcmsgConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    return unread(error, path);
  }
  return parseConfig(text, path);
}

/** `loadConfig` without blocking: for the instance, which reads the file
 * per request (so an edit needs no restart). */
export async function readConfig(path: string): Promise<CcmsgConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    return unread(error, path);
  }
  return parseConfig(text, path);
}

function unread(error: unknown, path: string): CcmsgConfig {
  if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
  throw new ContractError(
    "invalid_args",
    `config ${path}: cannot read: ${(error as Error).message}`,
  );
}

function parseConfig(text: string, path: string): CcmsgConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ContractError(
      "invalid_args",
      `config ${path}: not valid JSON: ${(error as Error).message}`,
    );
  }
  return checkConfig(value, path);
}

/** The config a parsed document describes, or a ContractError naming the key. */
export function checkConfig(value: unknown, path: string): CcmsgConfig {
  const bad = (key: string, why: string) =>
    new ContractError("invalid_args", `config ${path}: ${key}: ${why}`);
  if (!isObject(value)) throw bad("(top level)", "must be a JSON object");
  for (const key of Object.keys(value)) {
    if (!KNOWN_KEYS.includes(key)) throw bad(key, `unknown key (known: ${KNOWN_KEYS.join(", ")})`);
  }
  const out: CcmsgConfig = {};
  if (value.checks !== undefined) {
    if (!Array.isArray(value.checks)) throw bad("checks", "must be an array of {name, command}");
    const names = new Set<string>();
    out.checks = value.checks.map((c: unknown, i: number) => {
      const at = `checks[${i}]`;
      if (!isObject(c)) throw bad(at, "must be an object {name, command}");
      for (const k of Object.keys(c))
        if (k !== "name" && k !== "command") throw bad(`${at}.${k}`, "unknown key");
      if (!nonEmpty(c.name)) throw bad(`${at}.name`, "must be a non-empty string");
      if (!nonEmpty(c.command)) throw bad(`${at}.command`, "must be a non-empty string");
      if (names.has(c.name)) throw bad(`${at}.name`, `duplicate check name "${c.name}"`);
      names.add(c.name);
      return { name: c.name, command: c.command };
    });
  }
  if (value.budget_usd !== undefined) {
    const b = value.budget_usd;
    if (typeof b !== "number" || !Number.isFinite(b) || b < 0)
      throw bad("budget_usd", "must be a number ≥ 0");
    out.budget_usd = b;
  }
  if (value.handoff_path !== undefined) {
    if (!nonEmpty(value.handoff_path)) throw bad("handoff_path", "must be a non-empty string");
    out.handoff_path = value.handoff_path;
  }
  if (value.linear !== undefined) {
    const l = value.linear;
    if (!isObject(l)) throw bad("linear", "must be an object {project?}");
    for (const k of Object.keys(l)) if (k !== "project") throw bad(`linear.${k}`, "unknown key");
    if (l.project !== undefined && !nonEmpty(l.project))
      throw bad("linear.project", "must be a non-empty string");
    out.linear = l.project === undefined ? {} : { project: l.project };
  }
  if (value.direct_delivery !== undefined) {
    if (typeof value.direct_delivery !== "boolean")
      throw bad("direct_delivery", "must be true or false");
    out.direct_delivery = value.direct_delivery;
  }
  if (value.codex_command !== undefined) {
    if (!nonEmpty(value.codex_command)) throw bad("codex_command", "must be a non-empty string");
    out.codex_command = value.codex_command;
  }
  for (const key of ["stale_bash_seconds", "quiet_session_seconds"] as const) {
    const v = value[key];
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isFinite(v) || v <= 0)
      throw bad(key, "must be a number of seconds > 0");
    out[key] = v;
  }
  if (value.dump_presets !== undefined) out.dump_presets = checkPresets(value.dump_presets, bad);
  if (value.search_budget_ms !== undefined) {
    const ms = value.search_budget_ms;
    if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 1 || ms > 600_000)
      throw bad("search_budget_ms", "must be an integer from 1 to 600000");
    out.search_budget_ms = ms;
  }
  if (value.launcher !== undefined) out.launcher = checkLauncher(value.launcher, bad);
  if (value.attention !== undefined) {
    const a = value.attention;
    if (!isObject(a))
      throw bad(
        "attention",
        "must be an object {hold_seconds?, codex_hold_seconds?, at_terminal_seconds?}",
      );
    out.attention = {};
    for (const k of Object.keys(a)) {
      if (k !== "hold_seconds" && k !== "codex_hold_seconds" && k !== "at_terminal_seconds")
        throw bad(`attention.${k}`, "unknown key");
      const v = a[k];
      const least = k === "at_terminal_seconds" ? 0 : 1;
      if (typeof v !== "number" || !Number.isFinite(v) || v < least || v > 86_400)
        throw bad(`attention.${k}`, `must be a number of seconds from ${least} to 86400`);
      out.attention[k] = v;
    }
  }
  if (value.reservations !== undefined) {
    const r = value.reservations;
    if (!isObject(r))
      throw bad("reservations", 'must be an object {on_conflict?: "warn" | "block"}');
    for (const k of Object.keys(r))
      if (k !== "on_conflict") throw bad(`reservations.${k}`, "unknown key");
    if (r.on_conflict !== undefined && r.on_conflict !== "warn" && r.on_conflict !== "block")
      throw bad("reservations.on_conflict", 'must be "warn" or "block"');
    out.reservations = r.on_conflict === undefined ? {} : { on_conflict: r.on_conflict };
  }
  if (value.sync !== undefined) out.sync = checkSync(value.sync, bad);
  if (value.llm !== undefined) out.llm = checkLlm(value.llm, bad);
  if (value.http !== undefined) out.http = checkHttp(value.http, bad);
  if (value.store !== undefined) {
    if (typeof value.store !== "string" || !isPostgresUrl(value.store))
      throw bad("store", "must be a postgres://… URL (the default board needs no key)");
    out.store = value.store;
  }
  if (value.mesh !== undefined) out.mesh = checkMesh(value.mesh, path);
  return out;
}

/** `http`: `{ endpoint?, trusted_proxies?, source_ips? }`. */
function checkHttp(value: unknown, bad: (key: string, why: string) => ContractError): HttpConfig {
  if (!isObject(value))
    throw bad("http", "must be an object {endpoint?, trusted_proxies?, source_ips?}");
  const out: HttpConfig = {};
  for (const k of Object.keys(value))
    if (!["endpoint", "trusted_proxies", "source_ips"].includes(k))
      throw bad(`http.${k}`, "unknown key");
  if (value.endpoint !== undefined) {
    let url: URL | undefined;
    try {
      url = typeof value.endpoint === "string" ? new URL(value.endpoint) : undefined;
    } catch {}
    if (
      url === undefined ||
      (url.protocol !== "https:" && url.protocol !== "http:") ||
      !url.pathname.endsWith("/") ||
      url.search !== "" ||
      url.hash !== ""
    )
      throw bad(
        "http.endpoint",
        "must be an http(s) URL ending in / (e.g. https://box.example.ts.net/)",
      );
    out.endpoint = url.href;
  }
  for (const key of ["trusted_proxies", "source_ips"] as const) {
    const list = value[key];
    if (list === undefined) continue;
    if (!Array.isArray(list) || !list.every((e) => typeof e === "string" && isAddressEntry(e)))
      throw bad(`http.${key}`, "must be an array of IP addresses or CIDR ranges");
    out[key] = list as string[];
  }
  return out;
}

/** `sync`: `{ github?: {repo?, interval_seconds?}, linear?: {project?,
 * endpoint?, token_env?, interval_seconds?} }`. */
function checkSync(value: unknown, bad: (key: string, why: string) => ContractError): SyncConfig {
  if (!isObject(value)) throw bad("sync", "must be an object {github?, linear?}");
  const out: SyncConfig = {};
  const keys = (o: Record<string, unknown>, at: string, known: string[]) => {
    for (const k of Object.keys(o))
      if (!known.includes(k)) throw bad(`${at}.${k}`, `unknown key (known: ${known.join(", ")})`);
  };
  keys(value, "sync", ["github", "linear"]);
  const interval = (v: unknown, at: string) => {
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > 86_400)
      throw bad(at, "must be a whole number of seconds from 1 to 86400");
    return v;
  };
  if (value.github !== undefined) {
    const g = value.github;
    if (!isObject(g)) throw bad("sync.github", "must be an object {repo?, interval_seconds?}");
    keys(g, "sync.github", ["repo", "interval_seconds"]);
    if (g.repo !== undefined && (typeof g.repo !== "string" || !/^[\w.-]+\/[\w.-]+$/.test(g.repo)))
      throw bad("sync.github.repo", "must be owner/name");
    out.github = {};
    if (g.repo !== undefined) out.github.repo = g.repo as string;
    const i = interval(g.interval_seconds, "sync.github.interval_seconds");
    if (i !== undefined) out.github.interval_seconds = i;
  }
  if (value.linear !== undefined) {
    const l = value.linear;
    if (!isObject(l))
      throw bad(
        "sync.linear",
        "must be an object {project?, endpoint?, token_env?, interval_seconds?}",
      );
    keys(l, "sync.linear", ["project", "endpoint", "token_env", "interval_seconds"]);
    out.linear = {};
    if (l.project !== undefined) {
      if (!nonEmpty(l.project)) throw bad("sync.linear.project", "must be a non-empty string");
      out.linear.project = l.project;
    }
    if (l.endpoint !== undefined) {
      let url: URL | undefined;
      try {
        url = typeof l.endpoint === "string" ? new URL(l.endpoint) : undefined;
      } catch {}
      if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:"))
        throw bad("sync.linear.endpoint", "must be an http(s) URL");
      out.linear.endpoint = l.endpoint as string;
    }
    if (l.token_env !== undefined) {
      if (typeof l.token_env !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(l.token_env))
        throw bad("sync.linear.token_env", "must be an environment variable name");
      out.linear.token_env = l.token_env;
    }
    const i = interval(l.interval_seconds, "sync.linear.interval_seconds");
    if (i !== undefined) out.linear.interval_seconds = i;
  }
  return out;
}

/** `dump_presets`: `[{name, description?, opts: {types: [selector…]}}]`, the
 * shape `dump_presets_read` returns; references must resolve without a cycle. */
function checkPresets(
  value: unknown,
  bad: (key: string, why: string) => ContractError,
): DumpPreset[] {
  const shape = "must be an array of {name, description?, opts: {types: [selector…]}}";
  if (!Array.isArray(value)) throw bad("dump_presets", shape);
  const presets = value.map((p: unknown, i: number): DumpPreset => {
    const at = `dump_presets[${i}]`;
    if (!isObject(p)) throw bad(at, shape);
    for (const k of Object.keys(p))
      if (k !== "name" && k !== "description" && k !== "opts")
        throw bad(`${at}.${k}`, "unknown key");
    if (!nonEmpty(p.name)) throw bad(`${at}.name`, "must be a non-empty string");
    if (p.description !== undefined && typeof p.description !== "string")
      throw bad(`${at}.description`, "must be a string");
    const opts = p.opts;
    if (!isObject(opts)) throw bad(`${at}.opts`, "must be an object {types: [selector…]}");
    for (const k of Object.keys(opts))
      if (k !== "types") throw bad(`${at}.opts.${k}`, "unknown key");
    if (!Array.isArray(opts.types) || !opts.types.every((t) => typeof t === "string"))
      throw bad(`${at}.opts.types`, "must be an array of selectors (strings)");
    return {
      name: p.name,
      ...(p.description === undefined ? {} : { description: p.description }),
      opts: { types: [...opts.types] },
    };
  });
  const problems = presetProblems(presets);
  if (problems.length > 0) throw bad("dump_presets", problems.join("; "));
  return presets;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function nonEmpty(v: unknown): v is string {
  return typeof v === "string" && v.trim() !== "";
}
