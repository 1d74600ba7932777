import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./instance.js";

// What a process loaded of the bundle (test/helpers/record-loads.mjs wrote
// it), read against the build's map of each chunk's sources.

export const RECORD_LOADS = join(ROOT, "test", "helpers", "record-loads.mjs");

/** The environment that makes a `node` child record its loads in `file`. */
export function recordingEnv(file: string): Record<string, string> {
  return { NODE_OPTIONS: `--import=${RECORD_LOADS}`, CCMSG_RECORD_LOADS: file };
}

interface Chunk {
  bytes: number;
  inputs: Record<string, unknown>;
}

/** The bundles' chunks it loaded (each once: the command's, dist/bin/, and
 * the instance's, dist/daemon/), with their bytes and sources. */
export function loadedChunks(file: string): { path: string; bytes: number; sources: string[] }[] {
  const meta = JSON.parse(readFileSync(join(ROOT, "dist", "bundle-meta.json"), "utf8")) as Record<
    string,
    Chunk
  >;
  const paths = new Set(
    readFileSync(file, "utf8")
      .split("\n")
      .map((url) => /\/(dist\/(?:bin|daemon)\/.*)$/.exec(url)?.[1])
      .filter((path) => path !== undefined),
  );
  return [...paths].map((path) => {
    const chunk = meta[path];
    if (chunk === undefined) throw new Error(`${path} is not in dist/bundle-meta.json`);
    return { path, bytes: chunk.bytes, sources: Object.keys(chunk.inputs) };
  });
}

/** Node's public modules it had loaded when it exited (`crypto`, `net`…). */
export function loadedBuiltins(file: string): string[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.startsWith("builtin:") && !line.startsWith("builtin:internal/"))
    .map((line) => line.slice("builtin:".length));
}
