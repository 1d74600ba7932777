import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { hudReport } from "../hud/report.js";
import { resolveStateDir } from "../state/paths.js";
import type { Command } from "./command.js";
import { parse, wantsJson } from "./options.js";

/** `ccmsg hud [--sid s] [--json] [--write path]` — the `ecc.hud-status.v1`
 * payload for a session: the calling one, else the most recently active. */
export const hud: Command = async (argv) => {
  const { values } = parse(
    argv,
    { write: { type: "string" } },
    "ccmsg hud [--sid s] [--json] [--write path]",
  );
  const { payload, text } = await hudReport(resolveStateDir(values["state-dir"]), values.sid);
  const out = wantsJson(values) ? `${JSON.stringify(payload)}\n` : `${text()}\n`;
  if (values.write !== undefined) {
    // `--write` keeps exactly what was printed (ECC's convention).
    mkdirSync(dirname(values.write), { recursive: true });
    writeFileSync(values.write, out);
  }
  process.stdout.write(out);
};
