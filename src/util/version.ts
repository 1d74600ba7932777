import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** This build's version, from the package's package.json (one place for the
 * fact). Found by walking up from this module, which works from `src/`, from
 * `dist/` and from a bundled chunk alike. */
export const VERSION: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "ccmsg" && pkg.version) return pkg.version;
    } catch {}
    dir = dirname(dir);
  }
  return "0.0.0";
})();
