import { applySync, recordSyncFailure, summary } from "../board/sync/apply.js";
import {
  githubOpenOnBoard,
  linearOpenOnBoard,
  runSync,
  type SyncReport,
} from "../board/sync/run.js";
import { loadConfig } from "../config/config.js";
import { ContractError } from "../contract/errors.js";
import { configFile, resolveStateDir, stateFiles } from "../state/paths.js";
import { ensureStateDir } from "../state/state-dir.js";
import { isEccStateStore } from "../store/ecc-state-store.js";
import { openStateStore } from "../store/state-store.js";
import { parse, wantsJson } from "./options.js";

const USAGE =
  "ccmsg board sync github [--repo owner/name] | linear [--project p] [--json] [--db PATH]";

/**
 * `ccmsg board sync github|linear` — read the source, then write the board
 * in one transaction (straight to the store, like every `board` verb; a
 * running instance tells its watchers). Stages go to stderr for a person;
 * a failed sync is recorded for `ccmsg status`, leaves the board as it was,
 * and exits 1.
 */
export async function boardSync(argv: string[]): Promise<void> {
  const { values, positionals } = parse(
    argv,
    { repo: { type: "string" }, project: { type: "string" }, db: { type: "string" } },
    USAGE,
  );
  const [source, ...extra] = positionals;
  if ((source !== "github" && source !== "linear") || extra.length > 0)
    throw new ContractError("invalid_args", `usage: ${USAGE}`);
  if (source === "github" && values.project !== undefined)
    throw new ContractError("invalid_args", "--project is for linear");
  if (source === "linear" && values.repo !== undefined)
    throw new ContractError("invalid_args", "--repo is for github");
  const json = wantsJson(values);
  const config = loadConfig(configFile(undefined, process.env));
  let dbPath = values.db;
  if (dbPath === undefined) {
    // A sync may come before any instance ran: the state dir is made private.
    const dir = resolveStateDir(values["state-dir"]);
    process.umask(0o077);
    ensureStateDir(dir);
    dbPath = stateFiles(dir).database;
  }
  // A sync keeps its runs in tables of ccmsg's own; ECC's file has none,
  // and ccmsg's migrations must never run in it.
  if (isEccStateStore(dbPath))
    throw new ContractError(
      "invalid_args",
      `${dbPath} is a state store of ECC's own tools: ccmsg board sync writes only ccmsg's own store (run it without --db); ccmsg board add|claim|move|list --db work on it under ECC's lock`,
    );
  const store = openStateStore(dbPath);
  let report: SyncReport;
  try {
    report = await runSync(
      {
        source,
        ...(values.repo === undefined ? {} : { repo: values.repo }),
        ...(values.project === undefined ? {} : { project: values.project }),
      },
      {
        config,
        cwd: process.cwd(),
        env: process.env,
        progress: (stage) => {
          if (!json) process.stderr.write(`${source}: ${stage}…\n`);
        },
        openOnBoard: (repo) => store.read(() => githubOpenOnBoard(store.db, repo)),
        linearOnBoard: (id) => store.read(() => linearOpenOnBoard(store.db, id)),
        apply: async (result) => applySync(store, result),
        fail: async (f) => recordSyncFailure(store, f),
      },
    );
  } finally {
    store.close();
  }
  if (!report.ok) {
    throw new ContractError(
      report.code === "invalid_args" ? "invalid_args" : "internal_error",
      `${source} sync failed (recorded; the board is unchanged): ${report.message}`,
    );
  }
  if (json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return;
  }
  const lines = [`${source} sync of ${report.target}: ${summary(report.counts)}`];
  for (const r of report.retainedItems) lines.push(`  kept open: ${r.id} — ${r.reason}`);
  process.stdout.write(`${lines.join("\n")}\n`);
}
