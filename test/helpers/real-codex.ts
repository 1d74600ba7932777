import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { ROOT } from "./instance.js";
import { TmuxSession, until } from "./real-claude.js";

// The REAL Codex CLI (npm @openai/codex, harness spec §11) for tests: its
// config against a scripted Responses API, the person's trust of ccmsg's
// hooks as Codex's own /hooks screen records it, and its TUI in tmux.

export const CODEX_BIN = join(ROOT, "node_modules", ".bin");
export const CODEX = join(CODEX_BIN, "codex");

/** The person's config.toml: the scripted model as the provider, `cwd`
 * trusted, and `extra` (approval settings, …) at the top level. */
export function writeCodexConfig(
  codexHome: string,
  baseUrl: string,
  cwd: string,
  extra = "",
): string {
  const person = `# the person's own settings
model = "fake-model"
model_provider = "fake"
${extra}
[model_providers.fake]
name = "fake"
base_url = "${baseUrl}"
wire_api = "responses"

[projects."${cwd}"]
trust_level = "trusted"

# The TUI runs its threads itself: Codex's background app-server (on by
# default) would keep a thread, and this test's home, past the session.
[features]
daemon_auto_start = false
`;
  writeFileSync(join(codexHome, "config.toml"), person);
  return person;
}

export interface CodexHook {
  key: string;
  eventName: string;
  command: string;
  currentHash: string;
  trustStatus: string;
}

/** Trust every hook Codex lists as untrusted, as its /hooks screen does:
 * `hooks/list` gives each hook's current hash, `config/batchWrite` records it
 * under `hooks.state` in the person's config.toml. Returns the hooks before
 * and after. */
export async function trustHooks(env: Record<string, string>, cwd: string) {
  const child = spawn(CODEX, ["app-server"], { env, cwd, stdio: ["pipe", "pipe", "pipe"] });
  const waiting = new Map<number, (m: { result?: unknown; error?: unknown }) => void>();
  let buffered = "";
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString("utf8");
  });
  // An app-server that exits fails every call still waiting, with what it said.
  child.on("exit", (code) => {
    for (const w of waiting.values()) w({ error: `codex app-server exited (${code}): ${stderr}` });
  });
  child.stdout.on("data", (c: Buffer) => {
    buffered += c.toString("utf8");
    for (let i = buffered.indexOf("\n"); i !== -1; i = buffered.indexOf("\n")) {
      const m = JSON.parse(buffered.slice(0, i));
      buffered = buffered.slice(i + 1);
      if (typeof m.id === "number") waiting.get(m.id)?.(m);
    }
  });
  let next = 0;
  const call = <T>(method: string, params: unknown) =>
    new Promise<T>((resolve, reject) => {
      const id = ++next;
      waiting.set(id, (m) =>
        m.error ? reject(new Error(JSON.stringify(m.error))) : resolve(m.result as T),
      );
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    });
  type Listed = { data: { hooks: CodexHook[]; errors: unknown[] }[] };
  try {
    await call("initialize", { clientInfo: { name: "ccmsg-test", version: "0" } });
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "initialized" })}\n`);
    const listed = await call<Listed>("hooks/list", { cwds: [cwd] });
    expect(listed.data[0]!.errors).toEqual([]);
    const untrusted = listed.data[0]!.hooks.filter((h) => h.trustStatus !== "trusted");
    const state = Object.fromEntries(
      untrusted.map((h) => [h.key, { trusted_hash: h.currentHash }]),
    );
    await call("config/batchWrite", {
      edits: [{ keyPath: "hooks.state", value: state, mergeStrategy: "upsert" }],
      filePath: null,
      expectedVersion: null,
      reloadUserConfig: true,
    });
    return {
      before: listed.data[0]!.hooks,
      after: (await call<Listed>("hooks/list", { cwds: [cwd] })).data[0]!.hooks,
    };
  } finally {
    child.kill();
  }
}

/** The Codex TUI in tmux, its prompt up. */
export async function startCodexTui(
  name: string,
  env: Record<string, string>,
  cwd: string,
  args: string[],
): Promise<TmuxSession> {
  const codex = new TmuxSession(name, env, cwd, [CODEX, ...args]);
  await until("the prompt", () => (codex.pane().includes("\u203a") ? true : undefined));
  return codex;
}

/** Type `text` into the Codex prompt and wait until it shows: Codex takes
 * keys that come at once for a paste, Enter included, so Enter comes after. */
export async function typeInto(codex: TmuxSession, text: string, enter = true): Promise<void> {
  codex.draft(text);
  await until(`"${text}" typed`, () =>
    codex.pane().includes(`\u203a ${text}`) ? true : undefined,
  );
  if (enter) codex.key("Enter");
}

/** The pane, or a word that it is gone, for a failure's report. */
export function paneOrGone(s: TmuxSession): string {
  try {
    return s.pane();
  } catch {
    return "(it has exited)";
  }
}
