import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { statusAt, statusMarkdown, statusText } from "../board/status.js";
import { ContractError } from "../contract/errors.js";
import { resolveStateDir, stateFiles } from "../state/paths.js";
import type { Command } from "./command.js";
import { parse } from "./options.js";

const USAGE =
  "ccmsg status [--json|--markdown] [--write PATH] [--exit-code] [--limit N] [--db PATH]";

/** `ccmsg status` — the readiness summary. Reading never writes the database;
 * `--exit-code` turns "needs attention" into exit status 2. */
export const status: Command = async (argv) => {
  const { values } = parse(
    argv,
    {
      markdown: { type: "boolean" },
      write: { type: "string" },
      "exit-code": { type: "boolean" },
      limit: { type: "string" },
      db: { type: "string" },
    },
    USAGE,
  );
  if (values.json && values.markdown)
    throw new ContractError("invalid_args", "--json and --markdown are exclusive");
  if (values.write !== undefined && !values.json && !values.markdown) {
    throw new ContractError("invalid_args", "--write needs --json or --markdown");
  }
  const limit = values.limit === undefined ? 5 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new ContractError("invalid_args", `--limit must be a positive integer: ${values.limit}`);
  const dbPath = values.db ?? stateFiles(resolveStateDir(values["state-dir"])).database;
  const doc = statusAt(dbPath, limit);
  const out = values.json
    ? `${JSON.stringify(doc, null, 2)}\n`
    : values.markdown
      ? statusMarkdown(doc)
      : `${statusText(doc)}\n`;
  process.stdout.write(out);
  if (values.write !== undefined) {
    mkdirSync(dirname(values.write), { recursive: true });
    writeFileSync(values.write, out);
  }
  if (values["exit-code"] && doc.readiness.status === "attention") process.exitCode = 2;
};
