import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { recordStatuslineInput } from "../../src/harness/claude/statusline-input.js";
import { stateFiles } from "../../src/state/paths.js";
import { CheckRunsStore } from "../../src/store/check-runs.js";
import { EccSessionsStore, type MirroredSession } from "../../src/store/ecc-sessions.js";
import { KvStore } from "../../src/store/kv.js";
import { openStateStore } from "../../src/store/migrated-store.js";
import { WorkItemsStore } from "../../src/store/work-items.js";

// Filling a state store the way the instance and `ccmsg board` / `check run`
// would, for the HUD to read.

export interface ItemSpec {
  id: string;
  status: string;
  metadata?: Record<string, unknown>;
  url?: string;
}

export function seedStore(
  stateDir: string,
  seed: {
    sessions?: MirroredSession[];
    items?: ItemSpec[];
    runs?: { repoRoot: string; name: string; command: string; status: "pass" | "fail" }[];
    /** KV entries, as the instance stores them. */
    kv?: { ns: string; key: string; value: unknown }[];
  },
): void {
  mkdirSync(stateDir, { recursive: true });
  const store = openStateStore(stateFiles(stateDir).database);
  try {
    store.write(() => {
      const sessions = new EccSessionsStore(store.db);
      for (const s of seed.sessions ?? []) sessions.put(s);
      const items = new WorkItemsStore(store.db);
      const start = Date.parse("2026-11-30T10:00:00Z");
      for (const [n, i] of (seed.items ?? []).entries()) {
        // Later in the list = more recently updated.
        const at = new Date(start + (n + 1) * 1000).toISOString();
        items.put({
          id: i.id,
          source: "github",
          sourceId: null,
          title: `Item ${i.id}`,
          status: i.status,
          priority: null,
          url: i.url ?? null,
          owner: null,
          repoRoot: null,
          sessionId: null,
          metadata: i.metadata ?? {},
          createdAt: at,
          updatedAt: at,
        });
      }
      const kv = new KvStore(store.db);
      for (const e of seed.kv ?? []) kv.write(e.ns, e.key, e.value, Date.now());
      const runs = new CheckRunsStore(store.db);
      for (const r of seed.runs ?? [])
        runs.record({
          ...r,
          exitCode: r.status === "pass" ? 0 : 1,
          durationMs: 10,
          outputTail: "",
          finishedAt: new Date().toISOString(),
        });
    });
  } finally {
    store.close();
  }
}

export function statuslineInput(sid: string, cwd: string, extra: Record<string, unknown> = {}) {
  return {
    hook_event_name: "Status",
    session_id: sid,
    cwd,
    model: { id: "claude-opus-4-1", display_name: "Opus" },
    workspace: { current_dir: cwd, project_dir: cwd },
    cost: {
      total_cost_usd: 0.84,
      total_duration_ms: 4_320_000,
      total_lines_added: 120,
      total_lines_removed: 30,
    },
    context_window: { remaining_percentage: 41, used_percentage: 59 },
    ...extra,
  };
}

export function recordInput(stateDir: string, input: { session_id: string }): void {
  recordStatuslineInput(stateFiles(stateDir).statusline, input.session_id, JSON.stringify(input));
}

export function todoFile(claudeHome: string, sid: string, list: unknown[]): void {
  mkdirSync(join(claudeHome, "todos"), { recursive: true });
  writeFileSync(join(claudeHome, "todos", `${sid}-agent-${sid}.json`), JSON.stringify(list));
}

export const TODOS = [
  { content: "Claim button", status: "in_progress", activeForm: "Wiring the claim button" },
  { content: "Docs", status: "pending", activeForm: "Writing docs" },
  { content: "Tests", status: "pending", activeForm: "Writing tests" },
  { content: "Schema", status: "completed", activeForm: "Writing the schema" },
];
