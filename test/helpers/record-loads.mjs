// `node --import ./test/helpers/record-loads.mjs …`: every module the process
// loads from a file is appended, one URL a line, to $CCMSG_RECORD_LOADS
// (test/helpers/loads.ts reads it). Module hooks see what a process really
// loads — which a test of what start or a command costs needs. What no hook
// sees is appended at exit: the files loaded by require (the command's
// bundle is CommonJS; on Node 20 its loads pass no module hook), from
// require's cache, and Node's own modules as `builtin:<name>` lines.
import { appendFileSync } from "node:fs";
import { createRequire, register } from "node:module";
import { pathToFileURL } from "node:url";

const record = process.env.CCMSG_RECORD_LOADS ?? "";
if (record !== "")
  process.once("exit", () => {
    const required = Object.keys(createRequire(import.meta.url).cache).map(
      (path) => `${pathToFileURL(path).href}\n`,
    );
    const builtins = process.moduleLoadList
      .filter((m) => m.startsWith("NativeModule "))
      .map((m) => `builtin:${m.slice("NativeModule ".length)}\n`);
    appendFileSync(record, [...required, ...builtins].join(""));
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
