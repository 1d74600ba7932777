import { readFileSync } from "node:fs";
import { DEFAULT_HTTP, stateFiles } from "../state/paths.js";

/**
 * Where the instance's hook route `path` is (DR-0058): on the address the
 * running instance serves HTTP on, else (`orDefault`) the default one it
 * will take. Undefined when the instance serves no HTTP.
 */
export function hookRouteUrl(
  stateDir: string,
  path: string,
  orDefault: boolean,
): string | undefined {
  let http: unknown = orDefault ? `http://${DEFAULT_HTTP}/` : undefined;
  try {
    http = (
      JSON.parse(readFileSync(stateFiles(stateDir).instanceJson, "utf8")) as { http?: unknown }
    ).http;
  } catch {}
  if (typeof http !== "string") return undefined;
  return new URL(path, http).href;
}
