// `node --import ./test/helpers/record-loads.mjs …`: every module the process
// loads from a file is appended, one URL a line, to $CCMSG_RECORD_LOADS
// (test/helpers/loads.ts reads it). Module hooks see what a process really
// loads — which a test of what start or a command costs needs. Node's own
// modules, which no hook sees when loaded by require, are appended at exit
// as `builtin:<name>` lines.
import { appendFileSync } from "node:fs";
import { register } from "node:module";

const record = process.env.CCMSG_RECORD_LOADS ?? "";
if (record !== "")
  process.once("exit", () => {
    const builtins = process.moduleLoadList
      .filter((m) => m.startsWith("NativeModule "))
      .map((m) => `builtin:${m.slice("NativeModule ".length)}\n`);
    appendFileSync(record, builtins.join(""));
  });

register(
  `data:text/javascript,${encodeURIComponent(`
    import { appendFileSync } from "node:fs";
    const out = ${JSON.stringify(process.env.CCMSG_RECORD_LOADS ?? "")};
    export async function load(url, context, next) {
      if (out !== "" && url.startsWith("file:")) appendFileSync(out, url + "\\n");
      return next(url, context);
    }
  `)}`,
);
