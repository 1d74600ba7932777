import { readFileSync } from "node:fs";

/** The parsed contents of a JSON file, or undefined when the file cannot be
 * read or does not hold JSON. For files other programs write (harness state,
 * ECC's bridge): a missing or torn file reads as "nothing there". */
export function readJsonFile(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as unknown;
  } catch {
    return undefined;
  }
}
