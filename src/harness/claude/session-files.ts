import { readdir, readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import {
  type ProcessStatus,
  processEnvVar,
  processExists,
  processStatus,
} from "../../probes/process.js";
import { freshReads } from "../fresh-read.js";

// Claude Code's state files, `<config home>/sessions/<pid>.json` (harness.md
// §5.1, unofficial): one per running Claude Code process, naming its session.
// Read only, never written. Claude Code rewrites them in place, so a read can
// catch one empty or half-written: such a file keeps the last complete row read
// from it. A row goes only when its file goes or its process has ended.

/** State files read per pass at most: one per running Claude Code process. */
export const MAX_SESSION_FILES = 1024;
/** A larger file is no state file this reader knows; it is not read. */
export const MAX_SESSION_FILE_BYTES = 64 * 1024;
/** A pid whose process started this long after the session did is another
 * process that reuses the number (when the file carries no `procStart`). */
const REUSE_SLACK_MS = 5000;
/** Files examined at once in one pass. */
const PARALLEL = 16;
/** The confirmation poll reads the directory itself at least this often; in
 * between it only asks whether the known rows' processes still run. */
export const FULL_PASS_EVERY_MS = 30_000;

/** One state file, in the harness's own field names (only those ccmsg reads). */
export interface SessionFile {
  pid: number;
  sessionId: string;
  cwd?: string;
  /** `interactive`, `bg`, … (open). */
  kind?: string;
  /** ms since the epoch. */
  startedAt?: number;
  updatedAt?: number;
  /** The process start in clock ticks since boot: the pid-reuse guard. */
  procStart?: string;
  /** `idle`, `busy`, `waiting` (open). */
  status?: string;
  /** What a `waiting` session waits on ("dialog open", "permission
   * prompt", …). */
  waitingFor?: string;
  /** When `status` last changed (ms since the epoch). */
  statusUpdatedAt?: number;
  name?: string;
  messagingSocketPath?: string;
  peerProtocol?: number;
  /** `<tmux session>:<window id>.<pane id>` when it runs in tmux. */
  tmux?: string;
  /** A background session's job. */
  jobId?: string;
  parkedJobId?: string;
  state?: string;
}

/** A state file whose process runs now. */
export interface LiveSessionFile extends SessionFile {
  path: string;
  /** When the process started (ms since the epoch), when /proc tells. */
  processStartedAt?: number;
  /** The tmux server's socket the process was started under (`TMUX`). */
  tmuxSocket?: string;
}

/** One pass over the directory. */
export type SessionFilesRead =
  | {
      ok: true;
      /** Rows of running processes, by pid. */
      rows: LiveSessionFile[];
      /** When the pass started (ms since the epoch). */
      readAt: number;
      /** More than MAX_SESSION_FILES files: the rest were not read. */
      truncated: boolean;
    }
  /** The directory could not be read (not a missing one, which holds no
   * session): nothing may be concluded from this pass. */
  | { ok: false; readAt: number; error: string };

/** What one file says: a row, an incomplete write, or complete JSON that is
 * no session's state (dropped). */
export type ParsedSessionFile =
  | { kind: "row"; row: SessionFile }
  | { kind: "incomplete" }
  | { kind: "other" };

/** Parse the text of `<pid>.json`; a row must name the pid of its file. */
export function parseSessionFile(text: string, filePid: number): ParsedSessionFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: "incomplete" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return { kind: "other" };
  const o = value as Record<string, unknown>;
  if (o.pid !== filePid || typeof o.sessionId !== "string" || o.sessionId === "")
    return { kind: "other" };
  const row: SessionFile = { pid: filePid, sessionId: o.sessionId };
  const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : undefined);
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
  const fields = {
    cwd: str(o.cwd),
    kind: str(o.kind),
    startedAt: num(o.startedAt),
    updatedAt: num(o.updatedAt),
    procStart:
      str(o.procStart) ?? (typeof o.procStart === "number" ? String(o.procStart) : undefined),
    status: str(o.status),
    // The harness writes `waitingFor`; older notes spell it `waiting_for`.
    waitingFor: str(o.waitingFor) ?? str(o.waiting_for),
    statusUpdatedAt: num(o.statusUpdatedAt),
    name: str(o.name),
    messagingSocketPath: str(o.messagingSocketPath),
    peerProtocol: num(o.peerProtocol),
    tmux: str(o.tmux),
    jobId: str(o.jobId),
    parkedJobId: str(o.parkedJobId),
    state: str(o.state),
  };
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) Object.assign(row, { [k]: v });
  return { kind: "row", row };
}

/** What is kept of one file between passes. */
interface Entry {
  /** mtime, size and inode of the text `row` was parsed from. */
  key?: string;
  /** Its last complete row (kept through incomplete rewrites). */
  row?: SessionFile;
  /** The process `tmuxSocket` was read for (its start), and the socket. */
  tmuxFor?: string;
  tmuxSocket?: string;
  /** What /proc said of the row's process when it was last found running
   * and proven to be the one that wrote the row. */
  proven?: { start?: string; startedAt?: number };
}

/**
 * The reader of one config home's `sessions/`. It remembers each file's last
 * complete row and reuses it while the file's mtime, size and inode stay the
 * same, so a pass over unchanged files costs a `stat` and a /proc read each.
 * `fresh()` passes are coalesced (`freshReads`); every finished pass is told to
 * `onRead` listeners, whoever asked for it.
 */
export class SessionFiles {
  readonly dir: string;
  /** A pass that started after this call. */
  readonly fresh: () => Promise<SessionFilesRead>;
  private readonly cache = new Map<string, Entry>();
  private readonly listeners = new Set<(read: SessionFilesRead) => void>();
  private last: SessionFilesRead | undefined;
  private lastFullAt = 0;
  /** Passes run one at a time, so they finish in the order they started. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly configHome: string) {
    this.dir = join(configHome, "sessions");
    this.fresh = freshReads(() => this.serial(() => this.pass(true)));
  }

  /**
   * The confirmation poll's pass: whether the processes of the rows already
   * known still run — what no watch reports (a process killed leaves its file
   * behind) — without reading the directory, the files or /proc: a signal-0
   * probe per process already proven to be its row's (DR-0025). A full pass
   * when the last one is FULL_PASS_EVERY_MS old.
   */
  confirm(): Promise<SessionFilesRead> {
    if (Date.now() - this.lastFullAt >= FULL_PASS_EVERY_MS) return this.fresh();
    return this.serial(() => this.pass(false));
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.queue.then(fn, fn);
    this.queue = p.catch(() => {});
    return p;
  }

  /** Told of every finished pass; returns how to stop listening. */
  onRead(listener: (read: SessionFilesRead) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async pass(full: boolean): Promise<SessionFilesRead> {
    const readAt = Date.now();
    let read: SessionFilesRead;
    try {
      read = full ? await this.scan(readAt) : await this.recheck(readAt);
      if (full) this.lastFullAt = readAt;
    } catch (error) {
      read = { ok: false, readAt, error: (error as Error).message };
    }
    this.last = read;
    for (const l of this.listeners) {
      try {
        l(read);
      } catch {
        // A listener's failure is its own: the pass and the others stand.
      }
    }
    return read;
  }

  private async scan(readAt: number): Promise<SessionFilesRead> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") throw error;
      names = [];
    }
    const files = names
      .filter((n) => /^[1-9]\d{0,9}\.json$/.test(n))
      .sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
    const truncated = files.length > MAX_SESSION_FILES;
    const wanted = new Set(files.slice(0, MAX_SESSION_FILES));
    for (const name of this.cache.keys()) if (!wanted.has(name)) this.cache.delete(name);
    const rows: LiveSessionFile[] = [];
    const queue = [...wanted];
    const worker = async () => {
      for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
        const row = await this.file(name);
        if (row !== undefined) rows.push(row);
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, queue.length) }, worker));
    rows.sort((a, b) => a.pid - b.pid);
    return { ok: true, rows, readAt, truncated };
  }

  /** The known rows whose process still runs (the files are not read). */
  private async recheck(readAt: number): Promise<SessionFilesRead> {
    const names = [...this.cache.keys()];
    const found = await Promise.all(names.map((name) => this.live(name, true)));
    const rows = found.filter((r) => r !== undefined).sort((a, b) => a.pid - b.pid);
    const truncated = this.last?.ok === true && this.last.truncated;
    return { ok: true, rows, readAt, truncated };
  }

  /** One file's row if its process runs, reading the file only when it
   * changed. */
  private async file(name: string): Promise<LiveSessionFile | undefined> {
    const path = join(this.dir, name);
    const pid = Number.parseInt(name, 10);
    let entry = this.cache.get(name);
    let st: Awaited<ReturnType<typeof stat>>;
    try {
      st = await stat(path);
    } catch {
      // Gone between the listing and now: its row goes with it.
      this.cache.delete(name);
      return undefined;
    }
    if (!st.isFile()) return undefined;
    const key = `${st.mtimeMs}:${st.size}:${st.ino}`;
    if (entry?.key !== key && st.size > 0 && st.size <= MAX_SESSION_FILE_BYTES) {
      const parsed = await readFile(path, "utf8").then(
        (text) => parseSessionFile(text, pid),
        (): ParsedSessionFile => ({ kind: "incomplete" }),
      );
      // An incomplete write keeps the last complete row, and is read again
      // next time.
      if (parsed.kind !== "incomplete") {
        const { tmuxFor, tmuxSocket } = entry ?? {};
        entry = { key, row: parsed.kind === "row" ? parsed.row : undefined, tmuxFor, tmuxSocket };
        this.cache.set(name, entry);
      }
    }
    return this.live(name);
  }

  /** The cached row of file `name` if the process that wrote it runs now.
   * `quick`: a process proven before only has to exist still. */
  private async live(name: string, quick = false): Promise<LiveSessionFile | undefined> {
    const entry = this.cache.get(name);
    const row = entry?.row;
    if (entry === undefined || row === undefined) return undefined;
    const pid = row.pid;
    const path = join(this.dir, name);
    let proc: ProcessStatus;
    if (quick && entry.proven !== undefined) {
      proc = processExists(pid) ? { alive: true, ...entry.proven } : { alive: false };
      if (!proc.alive) entry.proven = undefined;
    } else {
      proc = await processStatus(pid);
      entry.proven = undefined;
    }
    if (!proc.alive || !sameProcess(row, proc)) return undefined;
    entry.proven = { start: proc.start, startedAt: proc.startedAt };
    const live: LiveSessionFile = { ...row, path };
    if (proc.startedAt !== undefined) live.processStartedAt = proc.startedAt;
    if (row.tmux !== undefined) {
      const start = proc.start ?? "";
      if (entry.tmuxFor !== start) {
        entry.tmuxFor = start;
        entry.tmuxSocket = (await processEnvVar(pid, "TMUX"))?.split(",")[0];
      }
      if (entry.tmuxSocket) live.tmuxSocket = entry.tmuxSocket;
    }
    return live;
  }
}

/** Whether the running process `proc` is the one that wrote `row`: its start
 * time is the recorded `procStart`, or (without one) not later than the
 * session's own start. */
function sameProcess(row: SessionFile, proc: { start?: string; startedAt?: number }): boolean {
  if (row.procStart !== undefined && proc.start !== undefined) return row.procStart === proc.start;
  if (row.startedAt !== undefined && proc.startedAt !== undefined)
    return proc.startedAt <= row.startedAt + REUSE_SLACK_MS;
  return true;
}

/** The row that speaks for each session when several files name it (a
 * resumed session, a parked job): an unparked one, interactive first, then
 * the most recently updated — the harness's own choice. */
export function rowsBySession(rows: readonly LiveSessionFile[]): Map<string, LiveSessionFile> {
  const rank = (r: LiveSessionFile) =>
    (r.parkedJobId === undefined ? 2 : 0) +
    (r.kind === undefined || r.kind === "interactive" ? 1 : 0);
  const out = new Map<string, LiveSessionFile>();
  for (const row of rows) {
    const held = out.get(row.sessionId);
    if (
      held === undefined ||
      rank(row) > rank(held) ||
      (rank(row) === rank(held) &&
        (row.updatedAt ?? row.startedAt ?? 0) > (held.updatedAt ?? held.startedAt ?? 0))
    )
      out.set(row.sessionId, row);
  }
  return out;
}

/** One reader per config home in this process, so every caller shares its
 * remembered rows and its passes. */
const readers = new Map<string, SessionFiles>();

export function sessionFiles(configHome: string): SessionFiles {
  let reader = readers.get(configHome);
  if (reader === undefined) {
    reader = new SessionFiles(configHome);
    readers.set(configHome, reader);
  }
  return reader;
}

/**
 * The state file of session `sid` whose process runs now, from a fresh pass
 * (pid, `messagingSocketPath`, `peerProtocol`, …), or undefined.
 */
export async function findSessionFile(
  configHome: string,
  sid: string,
): Promise<LiveSessionFile | undefined> {
  const read = await sessionFiles(configHome).fresh();
  if (!read.ok) return undefined;
  return rowsBySession(read.rows.filter((r) => r.sessionId === sid)).get(sid);
}

export interface HarnessProcess {
  pid: number;
}

/**
 * The running Claude Code process whose state file names `sid`, if any. A
 * file naming a dead pid, or a pid recycled by another process (its
 * `procStart` differs), is left behind by a crash and names nobody.
 */
export async function harnessProcessOf(
  configHome: string,
  sid: string,
): Promise<HarnessProcess | undefined> {
  const row = await findSessionFile(configHome, sid);
  return row === undefined ? undefined : { pid: row.pid };
}

/** The pane id (`%<n>`) of a `tmux` field, the handle keys are sent to. */
export function tmuxPane(tmux: string): string | undefined {
  const pane = tmux.slice(tmux.lastIndexOf(".") + 1);
  return /^%\d+$/.test(pane) ? pane : undefined;
}

/** The namespace of a tmux socket path (`tmux -L <name>`); undefined for the
 * default one. */
export function tmuxNamespace(socket: string): string | undefined {
  const name = basename(socket);
  return name === "" || name === "default" ? undefined : name;
}
