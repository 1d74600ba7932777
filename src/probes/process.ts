import { readFile } from "node:fs/promises";
import { run } from "./exec.js";

// Which process is at the other end of a connection, and whose child it is
// (Linux: /proc and iproute2's `ss`). Every answer may be "unknown": a missing
// tool, another platform or a process that already left is no evidence.

/**
 * Where the process at the other end of a connection can be looked up: the
 * accepted Unix socket's descriptor, or both ends of a TCP connection.
 */
export type PeerEndpoint =
  | { kind: "uds"; fd: number }
  | { kind: "tcp"; local: HostPort; remote: HostPort };

export interface HostPort {
  address: string;
  port: number;
}

/** The fields of /proc/<pid>/stat that matter here, or undefined. */
async function stat(pid: number): Promise<{ ppid: number; start: string } | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count the
    // fields from after its closing one (field 3 is then index 0).
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const ppid = Number(fields[1]);
    const start = fields[19];
    return Number.isInteger(ppid) && start !== undefined ? { ppid, start } : undefined;
  } catch {
    return undefined;
  }
}

/** The kernel's start time of a process (clock ticks since boot), the guard
 * against a recycled pid; undefined when it does not exist. */
export async function processStart(pid: number): Promise<string | undefined> {
  return (await stat(pid))?.start;
}

/** The parent of a process; undefined when it does not exist. */
export async function parentPid(pid: number): Promise<number | undefined> {
  return (await stat(pid))?.ppid;
}

/** Whether `pid` is `ancestor` or runs below it; undefined when the chain
 * cannot be read to its end. */
export async function descendsFrom(pid: number, ancestor: number): Promise<boolean | undefined> {
  let at = pid;
  for (let hop = 0; hop < 128; hop++) {
    if (at === ancestor) return true;
    if (at <= 1) return false;
    const s = await stat(at);
    if (s === undefined) return undefined;
    at = s.ppid;
  }
  return undefined;
}

/**
 * The pids holding the other end of a connection, found with `ss -p` (the
 * kernel's socket table, which Node does not expose): for the Unix socket,
 * the peer of our descriptor; for TCP, the local socket connected to ours.
 * Empty when no process here holds it (it left, or it is on another
 * machine); undefined when `ss` cannot be asked.
 */
export async function peerPids(peer: PeerEndpoint): Promise<number[] | undefined> {
  const r = await run("ss", [peer.kind === "uds" ? "-xpnH" : "-tpnH"], { timeoutMs: 2000 });
  if (!r.ok) return undefined;
  const lines = r.stdout.split("\n").map(parseLine);
  if (peer.kind === "tcp") {
    const local = hostPort(peer.local.address, peer.local.port);
    const remote = hostPort(peer.remote.address, peer.remote.port);
    return lines.find((l) => l?.local === remote && l.peer === local)?.pids ?? [];
  }
  const mine = `pid=${process.pid},fd=${peer.fd})`;
  const ours = lines.find((l) => l?.raw.includes(mine));
  if (ours === undefined) return [];
  return lines.find((l) => l?.local === ours.peer && l.peer === ours.local)?.pids ?? [];
}

interface SsLine {
  raw: string;
  /** The local socket: inode (Unix) or address:port (TCP). */
  local: string;
  peer: string;
  pids: number[];
}

/**
 * One line of `ss -H`: `… <local> <peer> users:((…,pid=N,fd=M),…)`. For Unix
 * sockets the columns are `<path> <inode> <peer path> <peer inode>`, so the
 * last two columns before the process list are read for both kinds; for TCP
 * they are `<state> <recv> <send> <local> <peer>`.
 */
function parseLine(raw: string): SsLine | undefined {
  const users = raw.indexOf("users:");
  const cols = (users < 0 ? raw : raw.slice(0, users)).trim().split(/\s+/);
  if (cols.length < 4) return undefined;
  const unix = cols[0]?.startsWith("u_") ?? false;
  const local = unix ? cols[cols.length - 3] : cols[cols.length - 2];
  const peer = cols[cols.length - 1];
  if (local === undefined || peer === undefined) return undefined;
  const pids =
    users < 0 ? [] : [...raw.slice(users).matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
  return { raw, local, peer, pids: [...new Set(pids)] };
}

function hostPort(address: string, port: number): string {
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}

/** A loopback address, as a socket reports it (IPv4-mapped included). */
export function isLoopbackAddress(address: string): boolean {
  return /^(::ffff:)?127\./.test(address) || address === "::1";
}
