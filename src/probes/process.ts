import { close as fsClose, open as fsOpen, read as fsRead } from "node:fs";
import { open, readFile } from "node:fs/promises";
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
async function stat(
  pid: number,
): Promise<{ state: string; ppid: number; start: string } | undefined> {
  try {
    const text = await readSmall(`/proc/${pid}/stat`);
    // The command name (field 2) may hold spaces and parentheses: count the
    // fields from after its closing one (field 3 is then index 0).
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    const state = fields[0] ?? "";
    const ppid = Number(fields[1]);
    const start = fields[19];
    return Number.isInteger(ppid) && start !== undefined ? { state, ppid, start } : undefined;
  } catch {
    return undefined;
  }
}

/** A small file in one read (a /proc file reports no size, so a general read
 * loops): open, read, close — the presence poll does this per session. */
function readSmall(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    fsOpen(path, "r", (error, fd) => {
      if (error) return reject(error);
      // Under 4 KiB, so taken from Node's buffer pool (a stat line is ~300
      // bytes; its longest fields are numbers).
      const buf = Buffer.allocUnsafe(2048);
      fsRead(fd, buf, 0, buf.length, 0, (readError, n) => {
        fsClose(fd, () => {});
        if (readError) reject(readError);
        else resolve(buf.toString("utf8", 0, n));
      });
    });
  });
}

/** Whether a process runs now: `start` (field 22 of /proc/<pid>/stat, clock
 * ticks since boot) and `startedAt` (ms since the epoch) when /proc tells them.
 * A zombie has ended. Without /proc (another platform) only existence is
 * known, from a signal-0 probe. */
export type ProcessStatus = { alive: false } | { alive: true; start?: string; startedAt?: number };

export async function processStatus(pid: number): Promise<ProcessStatus> {
  if (!Number.isInteger(pid) || pid < 1) return { alive: false };
  const s = await stat(pid);
  if (s !== undefined) {
    if (s.state === "Z" || s.state === "X") return { alive: false };
    const boot = await bootTime();
    const ticks = Number(s.start);
    return boot === undefined || !Number.isFinite(ticks)
      ? { alive: true, start: s.start }
      : { alive: true, start: s.start, startedAt: boot + ticks * (1000 / CLOCK_TICKS_PER_S) };
  }
  if (await hasProc()) return { alive: false };
  return processExists(pid) ? { alive: true } : { alive: false };
}

/** Whether a process with this pid exists (a signal-0 probe: no file is read;
 * a zombie still exists, and so does a process that reuses the pid). */
export function processExists(pid: number): boolean {
  if (!Number.isInteger(pid) || pid < 1) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, owned by someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** USER_HZ: 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS_PER_S = 100;
let boot: Promise<number | undefined> | undefined;
let proc: Promise<boolean> | undefined;

/** The boot time in ms since the epoch (`btime` of /proc/stat), read once. */
function bootTime(): Promise<number | undefined> {
  boot ??= readFile("/proc/stat", "utf8").then(
    (text) => {
      const s = Number(/^btime (\d+)$/m.exec(text)?.[1]);
      return Number.isFinite(s) && s > 0 ? s * 1000 : undefined;
    },
    () => undefined,
  );
  return boot;
}

/** Whether this system has /proc (a pid missing from it has ended). */
function hasProc(): Promise<boolean> {
  proc ??= readFile("/proc/self/stat", "utf8").then(
    () => true,
    () => false,
  );
  return proc;
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

/** Most of a process environment read to find one variable. */
const MAX_ENVIRON_BYTES = 256 * 1024;

/** One variable of a running process's environment (as it was started), or
 * undefined when it is not set or cannot be read. */
export async function processEnvVar(pid: number, name: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(`/proc/${pid}/environ`, "r");
    // Most environments are a few KiB: grow only when one is not.
    let buf = Buffer.allocUnsafe(16 * 1024);
    let length = 0;
    for (;;) {
      if (length === buf.length) {
        if (buf.length >= MAX_ENVIRON_BYTES) break;
        buf = Buffer.concat([buf, Buffer.allocUnsafe(buf.length)]);
      }
      const { bytesRead } = await handle.read(buf, length, buf.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    const prefix = `${name}=`;
    for (const entry of buf.subarray(0, length).toString("utf8").split("\0")) {
      if (entry.startsWith(prefix)) return entry.slice(prefix.length);
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    await handle?.close().catch(() => {});
  }
}
