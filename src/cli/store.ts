import { ContractError } from "../contract/errors.js";
import { resolveStateDir, stateFiles } from "../state/paths.js";
import { isPostgresUrl } from "../store/pg/url.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";

const USAGE = "ccmsg store migrate --to postgres://… [--db PATH] [--json]";

/**
 * `ccmsg store migrate --to postgres://…` — copy the instance's board (work
 * items and check runs) and KV (tombstones too) into a team store in PostgreSQL (DR-0046): one
 * transaction, safe to run again, progress on stderr. The file is left as
 * it is; instances use the team board once started with `--store` or the
 * config's `store`.
 */
export const store: Command = async (argv) => {
  const [verb, ...rest] = argv;
  const { values } = parse(rest, { to: { type: "string" }, db: { type: "string" } }, USAGE);
  if (verb !== "migrate" || values.to === undefined)
    throw new ContractError("invalid_args", `usage: ${USAGE}`);
  if (!isPostgresUrl(values.to))
    throw new ContractError("invalid_args", "--to must be a postgres://… URL");
  const dbPath = values.db ?? stateFiles(resolveStateDir(values["state-dir"])).database;
  const { copyBoard } = await import("../store/pg/copy.js");
  const result = await copyBoard(dbPath, values.to, (line) =>
    process.stderr.write(`ccmsg store migrate: ${line}\n`),
  );
  print(
    values,
    { ok: true, ...result },
    () =>
      `copied ${result.workItems} work items, ${result.checkRuns} check runs and ${result.kv} KV entries from ${result.from} to ${result.to}`,
  );
};
