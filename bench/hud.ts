import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EccSessionsStore } from "../src/store/ecc-sessions.js";
import { openStateStore } from "../src/store/migrated-store.js";
import { WorkItemsStore } from "../src/store/work-items.js";
import { CLI } from "./daemon.js";
import { median, round } from "./measure.js";

// Cold-start cost of the two HUD commands, each beside a bare `node -e 0`
// measured in the same run with the same minimal environment: the statusline
// runs on every refresh of Claude Code's status bar, the HUD on demand
// against a board of 6,000 work items.

const RUNS = 20;
const WORK_ITEMS = 6000;
const STATUSES = ["open", "running", "blocked", "needs-review", "done", "in-progress", "closed"];

function time(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { cwd?: string; input?: string } = {},
): number {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    execFileSync(process.execPath, args, {
      env,
      cwd: options.cwd,
      input: options.input ?? "",
      stdio: ["pipe", "ignore", "ignore"],
    });
    samples.push(performance.now() - t0);
  }
  return round(median(samples));
}

/** A state dir with a mirrored session, 6,000 work items and a recorded
 * statusline input; a git repository for the session to work in; a Claude
 * config home with its todo list. */
function fixture(dir: string, sid: string): { repo: string; stateDir: string; claude: string } {
  const repo = join(dir, "repo");
  const stateDir = join(dir, "state");
  const claude = join(dir, "claude");
  mkdirSync(repo);
  mkdirSync(join(claude, "todos"), { recursive: true });
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", repo, ...args], {
      stdio: "ignore",
      env: {
        PATH: process.env.PATH,
        HOME: dir,
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_AUTHOR_NAME: "bench",
        GIT_AUTHOR_EMAIL: "bench@example.invalid",
        GIT_COMMITTER_NAME: "bench",
        GIT_COMMITTER_EMAIL: "bench@example.invalid",
      },
    });
  git("init", "-q", "-b", "main");
  writeFileSync(join(repo, "README.md"), "bench\n");
  git("add", ".");
  git("commit", "-q", "-m", "init");
  git("remote", "add", "origin", "git@github.com:acme/widgets.git");
  writeFileSync(
    join(claude, "todos", `${sid}-agent-${sid}.json`),
    JSON.stringify([
      { content: "Measure the HUD", status: "in_progress", activeForm: "Measuring the HUD" },
      { content: "Report", status: "pending", activeForm: "Reporting" },
    ]),
  );
  mkdirSync(stateDir, { recursive: true });
  const store = openStateStore(join(stateDir, "ccmsg.db"));
  const now = Date.now();
  store.write(() => {
    new EccSessionsStore(store.db).put({
      sid,
      instance: "0".repeat(32),
      state: "active",
      cwd: repo,
      repo_root: repo,
      branch: "main",
      transcript_path: join(claude, "projects", "repo", `${sid}.jsonl`),
      connected_at: now - 60_000,
    });
    const items = new WorkItemsStore(store.db);
    for (let i = 0; i < WORK_ITEMS; i++) {
      const at = new Date(now - i * 1000).toISOString();
      const pr = i % 3 === 0;
      items.put({
        id: `item-${i}`,
        source: pr ? "github" : "manual",
        sourceId: pr ? String(i) : null,
        title: `Work item ${i}`,
        status: STATUSES[i % STATUSES.length]!,
        priority: null,
        url: pr ? `https://github.com/acme/widgets/pull/${i}` : null,
        owner: null,
        repoRoot: repo,
        sessionId: null,
        metadata: pr ? { type: "pr", mergeStateStatus: i % 2 ? "CLEAN" : "DIRTY" } : {},
        createdAt: at,
        updatedAt: at,
      });
    }
  });
  store.close();
  return { repo, stateDir, claude };
}

export async function benchHud(): Promise<object> {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-hud-"));
  try {
    const sid = randomUUID();
    const { repo, stateDir, claude } = fixture(dir, sid);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, "config"),
      CCMSG_STATE_DIR: stateDir,
      CLAUDE_CONFIG_DIR: claude,
      CLAUDE_CODE_SESSION_ID: sid,
    };
    const input = JSON.stringify({
      hook_event_name: "Status",
      session_id: sid,
      transcript_path: join(claude, "projects", "repo", `${sid}.jsonl`),
      cwd: repo,
      version: "2.1.0",
      model: { id: "claude-opus-4-1", display_name: "Opus" },
      workspace: { current_dir: repo, project_dir: repo },
      cost: {
        total_cost_usd: 1.23,
        total_duration_ms: 4_320_000,
        total_api_duration_ms: 2_100_000,
        total_lines_added: 120,
        total_lines_removed: 30,
      },
      context_window: {
        total_input_tokens: 90_000,
        total_output_tokens: 12_000,
        context_window_size: 200_000,
        used_percentage: 38,
        remaining_percentage: 62,
      },
    });
    // Warm the file cache (and record the input the HUD reads).
    time([CLI, "statusline"], env, { cwd: repo, input });
    time([CLI, "hud", "--json"], env, { cwd: repo });
    const bare = time(["-e", "0"], { PATH: process.env.PATH });
    const statusline = time([CLI, "statusline"], env, { cwd: repo, input });
    const hud = time([CLI, "hud", "--json"], env, { cwd: repo });
    const bareAfter = time(["-e", "0"], { PATH: process.env.PATH });
    const node = round(Math.min(bare, bareAfter));
    return {
      runs: RUNS,
      work_items: WORK_ITEMS,
      bare_node_ms: node,
      statusline_ms: statusline,
      statusline_over_bare_node_ms: round(statusline - node),
      hud_json_ms: hud,
      hud_over_bare_node_ms: round(hud - node),
      targets: { statusline_over_bare_node_ms: 30, hud_over_bare_node_ms: 100 },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
