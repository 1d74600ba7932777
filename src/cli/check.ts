import { loadConfig } from "../config/config.js";
import { ContractError } from "../contract/errors.js";
import { runCheck } from "../hud/check-runner.js";
import { gitUnavailableReason, probeGit } from "../probes/git.js";
import { configFile, resolveStateDir, stateFiles } from "../state/paths.js";
import { ensureStateDir } from "../state/state-dir.js";
import type { CheckRun } from "../store/check-runs.js";
import { isPostgresUrl } from "../store/pg/url.js";
import type { Command } from "./command.js";
import { parse, print, wantsJson } from "./options.js";

const USAGE = "ccmsg check run [--name n] [--store postgres://…]";

/** `ccmsg check run [--name n]` — run the configured local checks in the
 * repository root, record each result for the HUD (in the team store when
 * `--store` or the config names one, DR-0046), print them; exit 1 when any
 * did not pass. */
export const check: Command = async (argv) => {
  const { values, positionals } = parse(
    argv,
    { name: { type: "string" }, store: { type: "string" } },
    USAGE,
  );
  if (positionals[0] !== "run" || positionals.length > 1)
    throw new ContractError("invalid_args", `usage: ${USAGE}`);
  if (values.store !== undefined && !isPostgresUrl(values.store))
    throw new ContractError("invalid_args", "--store must be a postgres://… URL");
  const path = configFile(undefined);
  const config = loadConfig(path);
  const checks = config.checks ?? [];
  if (checks.length === 0)
    throw new ContractError(
      "invalid_args",
      `no checks configured: add "checks": [{"name": "test", "command": "npm test"}] to ${path}`,
    );
  const selected =
    values.name === undefined ? checks : checks.filter((c) => c.name === values.name);
  if (selected.length === 0)
    throw new ContractError(
      "invalid_args",
      `no check named "${values.name}" (configured: ${checks.map((c) => c.name).join(", ")})`,
    );
  const git = await probeGit(process.cwd(), { timeoutMs: 5000 });
  if (git.state !== "ok")
    throw new ContractError(
      "capability_unavailable",
      `check: ${gitUnavailableReason(git.state, process.cwd())}`,
    );

  const team = values.store ?? config.store;
  const store = team === undefined ? await fileRuns(values["state-dir"]) : await teamRuns(team);
  const progress = wantsJson(values)
    ? () => {}
    : (line: string) => process.stderr.write(`${line}\n`);
  const results: CheckRun[] = [];
  try {
    for (const c of selected) {
      progress(`▶ ${c.name}: ${c.command}`);
      const r = await runCheck(c, git.toplevel);
      // Recorded as each finishes: an interrupted run keeps what completed.
      await store.record(r);
      results.push(r);
      progress(
        `${r.status === "pass" ? "✔" : "✘"} ${c.name} ${r.status}${r.exitCode !== null && r.exitCode !== 0 ? ` (exit ${r.exitCode})` : ""} in ${seconds(r.durationMs)}`,
      );
    }
  } finally {
    await store.close();
  }
  const failed = results.filter((r) => r.status !== "pass");
  print(values, { repoRoot: git.toplevel, results, passed: failed.length === 0 }, () => {
    const lines = results.map((r) => `${r.status.padEnd(5)} ${r.name}  ${r.command}`);
    for (const r of failed)
      lines.push("", `--- ${r.name} (last output) ---`, r.outputTail.trimEnd());
    return lines.join("\n");
  });
  if (failed.length > 0) process.exitCode = 1;
};

/** Where finished runs are recorded. */
interface RunLog {
  record(run: CheckRun): Promise<void>;
  close(): Promise<void>;
}

/** The instance's own file. */
async function fileRuns(stateDirFlag: string | undefined): Promise<RunLog> {
  const stateDir = resolveStateDir(stateDirFlag);
  ensureStateDir(stateDir);
  const { openStateStore } = await import("../store/migrated-store.js");
  const { CheckRunsStore } = await import("../store/check-runs.js");
  const store = openStateStore(stateFiles(stateDir).database);
  const runs = new CheckRunsStore(store.db);
  return {
    record: async (run) => store.write(() => runs.record(run)),
    close: async () => store.close(),
  };
}

/** The team store in PostgreSQL, which every instance's HUD reads. */
async function teamRuns(url: string): Promise<RunLog> {
  const { PgBoardStore } = await import("../store/pg/board-store.js");
  const store = await PgBoardStore.open(url);
  return {
    record: (run) => store.write((q) => q.recordCheckRun(run)),
    close: () => store.close(),
  };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
