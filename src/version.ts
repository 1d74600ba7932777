import { readFileSync } from "node:fs";

/** This build's version, from package.json (one place for the fact). */
export const VERSION: string = (() => {
  try {
    const pkg = new URL("../package.json", import.meta.url);
    return (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version;
  } catch {
    return "0.0.0";
  }
})();
