import { readFileSync } from "node:fs";
import { isInstanceId } from "../../contract/identifiers.js";
import { writeFileAtomic } from "../../state/atomic-write.js";
import { nodeCrypto } from "../../util/lazy-builtins.js";

/** The instance id: minted once (16 random bytes), kept for life. A file that
 * exists but does not hold an id is an error rather than replaced: every mid,
 * KV entry and last_live row refers to the id it holds. */
export function loadOrMintInstanceId(path: string): string {
  let text: string | undefined;
  try {
    text = readFileSync(path, "utf8").trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  if (text !== undefined) {
    if (!isInstanceId(text)) throw new Error(`${path} does not hold an instance id`);
    return text;
  }
  const id = nodeCrypto().randomBytes(16).toString("hex");
  writeFileAtomic(path, `${id}\n`);
  return id;
}
