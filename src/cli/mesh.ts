import { connectInstance } from "../client/connect.js";
import { loadConfig } from "../config/config.js";
import {
  type MeshListing,
  normalizeEndpoint,
  type PeerRow,
  readPeersFile,
  writePeersFile,
} from "../config/mesh.js";
import { ContractError } from "../contract/errors.js";
import { configFile, resolveStateDir, stateFiles } from "../state/paths.js";
import { ensureStateDir } from "../state/state-dir.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";

const USAGE = "ccmsg mesh add <endpoint> [--id <id>] | list | remove <endpoint|id>";
const ID = /^[0-9a-f]{32}$/;

/**
 * `ccmsg mesh …` — the instances this one links with (DR-0047). With an
 * instance running, an administrative frame on its socket edits
 * `<state dir>/mesh.json` and the change takes effect at once (a new peer is
 * dialed, a removed one's link closes); with none, the file is edited here and
 * read at the next start.
 */
export const mesh: Command = async (argv) => {
  const { values, positionals } = parse(argv, { id: { type: "string" } }, USAGE);
  const [verb, ...rest] = positionals;
  const stateDir = resolveStateDir(values["state-dir"]);
  const file = stateFiles(stateDir).mesh;
  let client: Awaited<ReturnType<typeof connectInstance>> | undefined;
  try {
    client = await connectInstance(values, { start: false });
  } catch (error) {
    if (!(error instanceof ContractError && error.code === "instance_unreachable")) throw error;
  }
  const call = async <T>(op: string, args: object): Promise<T> => {
    const { ok, request_id: _r, error, ...result } = await client!.send(op, args);
    if (!ok) throw new ContractError(error?.code ?? "internal_error", error?.msg ?? "failed");
    return result as T;
  };
  try {
    switch (verb) {
      case "add": {
        const input = rest[0];
        if (input === undefined || rest.length > 1)
          throw new ContractError("invalid_args", `usage: ${USAGE}`);
        const r = client
          ? await call<PeerRow & { added: boolean }>("admin_mesh_add", {
              endpoint: input,
              ...(values.id === undefined ? {} : { id: values.id }),
            })
          : addOffline(file, stateDir, input, values.id);
        print(values, r, () =>
          r.added
            ? `added ${r.endpoint}${r.id ? ` (${r.id})` : ""}${client ? "; dialing it now" : "; the instance dials it when it starts"}`
            : `${r.endpoint} was already listed`,
        );
        return;
      }
      case "list": {
        const r = client ? await call<MeshListing>("admin_mesh_list", {}) : listOffline(file);
        print(values, r, () => listText(r));
        return;
      }
      case "remove": {
        const ref = rest[0];
        if (ref === undefined || rest.length > 1)
          throw new ContractError("invalid_args", `usage: ${USAGE}`);
        const r = client
          ? await call<PeerRow>("admin_mesh_remove", { peer: ref })
          : removeOffline(file, ref);
        print(values, r, () => `removed ${r.endpoint}${client ? "; its link is closed" : ""}`);
        return;
      }
      default:
        throw new ContractError("invalid_args", `usage: ${USAGE}`);
    }
  } finally {
    client?.close();
  }
};

function addOffline(
  file: string,
  stateDir: string,
  input: string,
  id: string | undefined,
): PeerRow & { added: boolean } {
  const endpoint = normalizeEndpoint(input);
  if (endpoint === undefined)
    throw new ContractError("invalid_args", `not an endpoint: ${input} (an http(s) base URL)`);
  if (id !== undefined && !ID.test(id))
    throw new ContractError("invalid_args", "--id: an instance id is 32 lower-case hex digits");
  const rows = readPeersFile(file);
  const row: PeerRow = id === undefined ? { endpoint } : { endpoint, id };
  const at = rows.findIndex((r) => r.endpoint === endpoint);
  if (at >= 0 && rows[at]!.id === id) return { ...row, added: false };
  if (at >= 0) rows[at] = row;
  else rows.push(row);
  ensureStateDir(stateDir);
  writePeersFile(file, rows);
  return { ...row, added: true };
}

function removeOffline(file: string, ref: string): PeerRow {
  const endpoint = normalizeEndpoint(ref);
  const rows = readPeersFile(file);
  const found = rows.find((r) => r.endpoint === endpoint || r.id === ref);
  if (found === undefined) {
    const inConfig = configRows().some((r) => r.endpoint === endpoint || r.id === ref);
    throw new ContractError(
      inConfig ? "invalid_args" : "not_found",
      inConfig
        ? `${ref} is listed in the config file's mesh.endpoints: remove it there`
        : `no peer ${ref} in ${file}`,
    );
  }
  writePeersFile(
    file,
    rows.filter((r) => r !== found),
  );
  return found;
}

function configRows(): PeerRow[] {
  try {
    return loadConfig(configFile(undefined)).mesh?.endpoints ?? [];
  } catch {
    return [];
  }
}

function listOffline(file: string): MeshListing {
  const rows = new Map<string, MeshListing["peers"][number]>();
  const add = (r: PeerRow, source: "config" | "file") => {
    const had = rows.get(r.endpoint);
    rows.set(r.endpoint, {
      endpoint: r.endpoint,
      ...((r.id ?? had?.id) ? { id: r.id ?? had?.id } : {}),
      host: new URL(r.endpoint).hostname,
      // Config rows are read first: a file row seen again is both.
      source: had ? "config+file" : source,
      reachable: false,
    });
  };
  for (const r of configRows()) add(r, "config");
  for (const r of readPeersFile(file)) add(r, "file");
  return {
    self: { id: "", host: "" },
    inert: "no instance is running (start one with: ccmsg daemon start)",
    peers: [...rows.values()],
  };
}

function listText(r: MeshListing): string {
  const lines: string[] = [];
  if (r.self.id !== "")
    lines.push(
      `this instance: ${r.self.id}${r.self.endpoint ? ` at ${r.self.endpoint}` : ""} on ${r.self.host}`,
    );
  if (r.inert !== undefined) lines.push(`mesh inactive: ${r.inert}`);
  if (r.peers.length === 0) lines.push("no peers (add one with: ccmsg mesh add <endpoint>)");
  for (const p of r.peers) {
    const state = p.reachable
      ? `reachable, linked since ${new Date(p.linked_since!).toISOString()} (${p.direction === "out" ? "dialed by this instance" : "dialed by the peer"})`
      : `unreachable${p.last_error ? `: ${p.last_error}` : ""}`;
    lines.push(
      `${p.endpoint}  ${p.id ?? "(id not yet known)"}  ${p.host}  ${state}  [${p.source}]`,
    );
  }
  return lines.join("\n");
}
