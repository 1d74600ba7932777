import { applySync, recordSyncFailure, summary } from "../board/sync/apply.js";
import type { LinearSyncFacts } from "../board/sync/linear.js";
import {
  githubOpenOnBoard,
  linearLastCreate,
  linearOpenOnBoard,
  runSync,
  type SyncReport,
} from "../board/sync/run.js";
import { loadConfig } from "../config/config.js";
import { ContractError } from "../contract/errors.js";
import { configFile, resolveStateDir, stateFiles } from "../state/paths.js";
import { ensureStateDir } from "../state/state-dir.js";
import { isEccStateStore } from "../store/ecc-state-store.js";
import { openStateStore } from "../store/migrated-store.js";
import { parse, wantsJson } from "./options.js";

const USAGE =
  "ccmsg board sync github [--repo owner/name] | linear [--project p] [--create TITLE] [--json] [--db PATH]";

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
    {
      repo: { type: "string" },
      project: { type: "string" },
      create: { type: "string" },
      db: { type: "string" },
    },
    USAGE,
  );
  const [source, ...extra] = positionals;
  if ((source !== "github" && source !== "linear") || extra.length > 0)
    throw new ContractError("invalid_args", `usage: ${USAGE}`);
  if (source === "github" && values.project !== undefined)
    throw new ContractError("invalid_args", "--project is for linear");
  if (source === "github" && values.create !== undefined)
    throw new ContractError("invalid_args", "--create is for linear");
  if (values.create !== undefined && values.create.trim() === "")
    throw new ContractError("invalid_args", "--create needs the new issue's title");
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
        ...(values.create === undefined ? {} : { create: { title: values.create.trim() } }),
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
        linearLastCreate: () => store.read(() => linearLastCreate(store.db)),
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
  // The sync ran and was recorded either way; an issue asked for and not
  // created is still a refusal for whoever asked.
  const made = values.create === undefined ? null : (report.facts as LinearSyncFacts).lastCreate;
  if (made?.outcome === "capacity-blocked")
    throw new ContractError(
      "internal_error",
      `Linear refused to create the issue: the workspace's issue capacity is reached (${made.message ?? "usage limit exceeded"}); the sync of ${report.target} ran and was recorded`,
    );
  if (json) {
    process.stdout.write(`${JSON.stringify(report)}\n`);
    return;
  }
  const lines = [`${source} sync of ${report.target}: ${summary(report.counts)}`];
  if (made?.outcome === "created")
    lines.unshift(`created ${made.identifier ?? "an issue"} in Linear`);
  for (const r of report.retainedItems) lines.push(`  kept open: ${r.id} — ${r.reason}`);
  process.stdout.write(`${lines.join("\n")}\n`);
}
