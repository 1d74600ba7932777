import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { UsageError } from "../client/flags.js";
import { ADAPTERS, type AdapterId, inspectTarget } from "../hud/session-inspect.js";
import { openStoreReader } from "../hud/store-reader.js";
import { claudeConfigHome, codexConfigHome, resolveStateDir, stateFiles } from "../state/paths.js";
import type { Command } from "./command.js";
import { parse } from "./options.js";

const USAGE = "ccmsg session-inspect <target> [--write PATH] [--adapter id] [--list-adapters]";

/** `ccmsg session-inspect` — one session as ECC's `ecc.session.v1`, printed
 * as JSON (and written with `--write`). */
export const sessionInspect: Command = async (argv) => {
  const { values, positionals } = parse(
    argv,
    {
      write: { type: "string" },
      adapter: { type: "string" },
      "list-adapters": { type: "boolean" },
    },
    USAGE,
  );
  if (values["list-adapters"]) {
    process.stdout.write(`${JSON.stringify(ADAPTERS, null, 2)}\n`);
    return;
  }
  const target = positionals[0];
  if (target === undefined || positionals.length > 1)
    throw new UsageError(
      "name one target: claude:latest, claude:<id>, a .tmp session file, dmux:<dir> or a sid",
    );
  const files = stateFiles(resolveStateDir(values["state-dir"]));
  const reader = await openStoreReader(files.database);
  try {
    const doc = await inspectTarget(
      target,
      {
        claudeHome: claudeConfigHome(),
        codexHome: codexConfigHome(),
        cacheDir: files.foldCache,
        mirrored: (sid) => reader?.sessions?.get(sid),
      },
      values.adapter as AdapterId | undefined,
    );
    const out = `${JSON.stringify(doc, null, 2)}\n`;
    process.stdout.write(out);
    if (values.write !== undefined) {
      mkdirSync(dirname(values.write), { recursive: true });
      writeFileSync(values.write, out);
    }
  } finally {
    reader?.close();
  }
};
