import { loadConfig } from "../config.js";
import { ContractError } from "../contract/errors.js";
import { runCheck } from "../hud/check-runner.js";
import { configFile, resolveStateDir, stateFiles } from "../paths.js";
import { gitUnavailableReason, probeGit } from "../probes/git.js";
import { ensureStateDir } from "../state-dir.js";
import type { CheckRun } from "../store/check-runs.js";
import type { Command } from "./main.js";
import { parse, print, wantsJson } from "./options.js";

const USAGE = "ccmsg check run [--name n]";

/** `ccmsg check run [--name n]` — run the configured local checks in the
 * repository root, record each result for the HUD, print them; exit 1 when
 * any did not pass. */
export const check: Command = async (argv) => {
  const { values, positionals } = parse(argv, { name: { type: "string" } }, USAGE);
  if (positionals[0] !== "run" || positionals.length > 1)
    throw new ContractError("invalid_args", `usage: ${USAGE}`);
  const path = configFile(undefined);
  const checks = loadConfig(path).checks ?? [];
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

  const stateDir = resolveStateDir(values["state-dir"]);
  ensureStateDir(stateDir);
  const { openStateStore } = await import("../store/state-store.js");
  const { CheckRunsStore } = await import("../store/check-runs.js");
  const store = openStateStore(stateFiles(stateDir).database);
  const progress = wantsJson(values)
    ? () => {}
    : (line: string) => process.stderr.write(`${line}\n`);
  const results: CheckRun[] = [];
  try {
    const runs = new CheckRunsStore(store.db);
    for (const c of selected) {
      progress(`▶ ${c.name}: ${c.command}`);
      const r = await runCheck(c, git.toplevel);
      // Recorded as each finishes: an interrupted run keeps what completed.
      store.write(() => runs.record(r));
      results.push(r);
      progress(
        `${r.status === "pass" ? "✔" : "✘"} ${c.name} ${r.status}${r.exitCode !== null && r.exitCode !== 0 ? ` (exit ${r.exitCode})` : ""} in ${seconds(r.durationMs)}`,
      );
    }
  } finally {
    store.close();
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

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
