import { parseArgs } from "node:util";
import {
  colourWanted,
  readAll,
  STDIN_DEADLINE_MS,
  STDIN_LIMIT,
  statuslineFor,
} from "../harness/claude/statusline.js";
import { claudeConfigHome, resolveStateDir, stateFiles } from "../state/paths.js";
import type { Command } from "./command.js";

/** `ccmsg statusline` — the harness's `statusLine` command. Whatever happens
 * it exits 0, and it prints nothing rather than an error: a status bar shows
 * stdout verbatim and blanks on a failure. */
export const statusline: Command = async (argv) => {
  let line = "";
  try {
    const { values } = parseArgs({
      args: argv,
      options: { "state-dir": { type: "string" } },
      strict: false,
      allowPositionals: true,
    });
    const flag = values["state-dir"];
    const text = await readAll(process.stdin, STDIN_LIMIT, STDIN_DEADLINE_MS);
    if (text !== undefined) {
      const stateDir = resolveStateDir(typeof flag === "string" ? flag : undefined);
      const files = stateFiles(stateDir);
      line = await statuslineFor(text, {
        stateDir,
        recordDir: files.statusline,
        foldCacheDir: files.foldCache,
        claudeHome: claudeConfigHome(),
        colour: colourWanted(),
      });
    }
  } catch {
    line = "";
  }
  if (line !== "") process.stdout.write(`${line}\n`);
  process.exitCode = 0;
};
