import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ROOT } from "../helpers/instance.js";

// The dmux fixtures (test/fixtures/dmux, in dmux's own config shape) placed
// under a real project root: the root they name is replaced by `root`.

const FIXTURES = join(ROOT, "test", "fixtures", "dmux");
export const FIXTURE_ROOT = "/home/dev/src/widgets";

/** Write fixture `name` as `<root>/.dmux/dmux.config.json`; its path. */
export function placeDmuxConfig(root: string, name = "dmux.config.json"): string {
  const text = readFileSync(join(FIXTURES, name), "utf8").replaceAll(FIXTURE_ROOT, root);
  const path = join(root, ".dmux", "dmux.config.json");
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  return path;
}
