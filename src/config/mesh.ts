import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { ContractError } from "../contract/errors.js";
import { canonicalEndpoint, INSTANCE_ID_PATTERN } from "../contract/identifiers.js";
import { writeFileAtomic, writeFileAtomicAsync } from "../state/atomic-write.js";

// Who may join this instance's mesh (contract §8.1; DR-0047): the `mesh`
// section of ccmsg's config (one list naming every instance, identical on
// every host) united with `<state dir>/mesh.json`, which `ccmsg mesh add` and
// `remove` edit. Trust is rooted in endpoints: a peer is trusted for the
// endpoint it is listed under, and proves it holds that endpoint.

/** One peer row: its endpoint and, when known ahead, its instance id. */
export interface PeerRow {
  endpoint: string;
  id?: string;
}

export interface MeshConfig {
  endpoints?: PeerRow[];
}

/** A `mesh` section that cannot be used: startup fails with it (a mesh that
 * silently lost a row would look like an unreachable machine). */
export class MeshConfigError extends ContractError {
  constructor(msg: string) {
    super("invalid_args", msg);
  }
}

const ID = new RegExp(INSTANCE_ID_PATTERN);

/**
 * The one spelling of an endpoint that is compared (whole strings, after
 * this): the browser-canonical URL (lower-case host, no default port) with a
 * trailing slash. A path without one gets it — `https://h/ccmsg` and
 * `https://h/ccmsg/` name the same base URL, under which `ws` and
 * `mesh/jwk/…` are resolved — and a bare origin gets `/`. Anything with a
 * query, fragment or credentials is no endpoint. Wire values (`iss`, `aud`)
 * are not normalised: they must already be in this spelling.
 */
export function normalizeEndpoint(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return undefined;
  }
  if (value.includes("?") || value.includes("#")) return undefined;
  if (url.username !== "" || url.password !== "") return undefined;
  const path = url.pathname.endsWith("/") ? url.pathname : `${url.pathname}/`;
  return canonicalEndpoint(`${url.protocol}//${url.host}${path}`);
}

/** Check a list of rows (config `mesh.endpoints`, or mesh.json's `peers`):
 * each endpoint well-formed and listed once, each id an instance id. */
export function checkRows(
  value: unknown,
  at: string,
  bad: (key: string, why: string) => Error,
): PeerRow[] {
  if (!Array.isArray(value)) throw bad(at, "must be an array of {id?, endpoint}");
  const seen = new Map<string, number>();
  const ids = new Map<string, number>();
  return value.map((row: unknown, i: number) => {
    const here = `${at}[${i}]`;
    if (typeof row !== "object" || row === null || Array.isArray(row))
      throw bad(here, "must be an object {id?, endpoint}");
    const r = row as Record<string, unknown>;
    for (const k of Object.keys(r))
      if (k !== "id" && k !== "endpoint") throw bad(`${here}.${k}`, "unknown key");
    const endpoint = typeof r.endpoint === "string" ? normalizeEndpoint(r.endpoint) : undefined;
    if (endpoint === undefined)
      throw bad(
        `${here}.endpoint`,
        "must be an http(s) base URL without query or fragment (e.g. https://box.example.ts.net/)",
      );
    const before = seen.get(endpoint);
    if (before !== undefined)
      throw bad(`${here}.endpoint`, `${endpoint} is already listed at ${at}[${before}]`);
    seen.set(endpoint, i);
    if (r.id !== undefined && (typeof r.id !== "string" || !ID.test(r.id)))
      throw bad(`${here}.id`, "must be an instance id (32 lower-case hex digits)");
    if (r.id !== undefined && ids.has(r.id as string))
      throw bad(`${here}.id`, `${r.id} is already listed at ${at}[${ids.get(r.id as string)}]`);
    if (r.id !== undefined) ids.set(r.id as string, i);
    return r.id === undefined ? { endpoint } : { endpoint, id: r.id as string };
  });
}

/** `mesh`: `{ endpoints?: [{id?, endpoint}] }`, for config.ts's checkConfig. */
export function checkMesh(value: unknown, path: string): MeshConfig {
  const bad = (key: string, why: string) => new MeshConfigError(`config ${path}: ${key}: ${why}`);
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw bad("mesh", "must be an object {endpoints?: [{id?, endpoint}]}");
  const v = value as Record<string, unknown>;
  for (const k of Object.keys(v)) if (k !== "endpoints") throw bad(`mesh.${k}`, "unknown key");
  return v.endpoints === undefined
    ? {}
    : { endpoints: checkRows(v.endpoints, "mesh.endpoints", bad) };
}

/** The rows of mesh.json; a missing file has none, a damaged one is an error
 * naming the file (never silently an empty mesh). */
function parsePeersFile(text: string | undefined, path: string): PeerRow[] {
  if (text === undefined) return [];
  const bad = (key: string, why: string) => new MeshConfigError(`${path}: ${key}: ${why}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw bad("(file)", `not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw bad("(top level)", "must be an object {peers: [...]}");
  const peers = (value as { peers?: unknown }).peers;
  return peers === undefined ? [] : checkRows(peers, "peers", bad);
}

export function readPeersFile(path: string): PeerRow[] {
  let text: string | undefined;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return parsePeersFile(text, path);
}

export async function readPeersFileAsync(path: string): Promise<PeerRow[]> {
  let text: string | undefined;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  return parsePeersFile(text, path);
}

const peersText = (rows: PeerRow[]) => `${JSON.stringify({ peers: rows }, null, 2)}\n`;

/** Write mesh.json whole (0600, temp file then rename). */
export function writePeersFile(path: string, rows: PeerRow[]): void {
  writeFileAtomic(path, peersText(rows));
}

export function writePeersFileAsync(path: string, rows: PeerRow[]): Promise<void> {
  return writeFileAtomicAsync(path, peersText(rows));
}

/** This instance's endpoint: `http.endpoint` when configured, else the bound
 * HTTP base URL (a wildcard bind is named by loopback: set `http.endpoint`
 * for a mesh across machines). */
export function ownEndpoint(configured: string | undefined, bound: string): string | undefined {
  if (configured !== undefined) return normalizeEndpoint(configured);
  const colon = bound.lastIndexOf(":");
  let host = bound.slice(0, colon);
  if (host === "0.0.0.0") host = "127.0.0.1";
  if (host === "[::]") host = "[::1]";
  return normalizeEndpoint(`http://${host}:${bound.slice(colon + 1)}/`);
}

/** What `ccmsg mesh list` shows: the instance's answer to `admin_mesh_list`,
 * or the same read from the files when no instance runs. */
export interface MeshListing {
  self: { id: string; endpoint?: string; host: string };
  /** Why the mesh does nothing, when it does nothing. */
  inert?: string;
  peers: {
    endpoint: string;
    id?: string;
    host: string;
    source: "config" | "file" | "config+file";
    reachable: boolean;
    linked_since?: number;
    direction?: "in" | "out";
    last_error?: string;
  }[];
}
