import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { processStart } from "../../src/probes/process.js";
import { afterEachFile } from "./after-file.js";

// A stand-in for a running Claude Code session as far as direct delivery sees
// it (harness.md §5.1, §5.2, §5.3, and the 2.1.328 shapes of §11): a live
// process (a `sleep`, so pid liveness and its start time check out), its state
// file and key file in `<config home>/sessions/`, and a Unix socket at
// `messagingSocketPath` that speaks the socket's wire format — an auth line,
// then `user` frames — and can answer a `peer_message_status` receipt on the
// frame's `uds:` reply address.

const live = new Set<FakeHarness>();
afterEachFile(async () => {
  for (const h of [...live]) await h.stop();
});

export interface UserFrame {
  type: "user";
  from: string;
  session_id: string;
  msg_id: string;
  message: { content: string };
}

/** What the harness does with a user frame that passed authentication. */
export type Answer =
  /** Take it (silence: the sender counts it delivered). */
  | { kind: "accept" }
  /** Take nothing and send a receipt with this status to the reply address. */
  | { kind: "receipt"; status: string; dropped?: boolean; action?: "control" | "bare" };

export interface FakeHarnessOptions {
  /** The config home whose `sessions/` gets the files. */
  configHome: string;
  /** The sid the state file names. */
  sid: string;
  /** `peerProtocol` in the state file (default 1). */
  peerProtocol?: unknown;
  /** The key file's token: a string (default: 32 random hex), "" for an
   * empty token, null for no key file at all. */
  token?: string | null;
  /** Leave `messagingSocketPath` out of the state file. */
  noSocketPath?: boolean;
  /** Never read from a connection (so a large frame cannot be flushed). */
  stall?: boolean;
  /** Do not listen at all (the state file names a socket nobody serves). */
  noListener?: boolean;
}

export class FakeHarness {
  /** Every auth line received, in order. */
  readonly auths: { type: string; token?: string }[] = [];
  /** Every user frame taken (authenticated), in order. */
  readonly users: UserFrame[] = [];
  /** How the next user frames are answered; the last entry repeats. */
  answers: Answer[] = [{ kind: "accept" }];
  readonly socketPath: string;
  readonly token: string | null;
  private readonly dir: string;
  private readonly server: Server | undefined;
  private readonly conns = new Set<Socket>();
  private waiters: (() => void)[] = [];

  private constructor(
    readonly options: FakeHarnessOptions,
    private readonly proc: ChildProcess,
    readonly pid: number,
    readonly procStart: string,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), "cc-"));
    this.socketPath = join(this.dir, `${pid}.sock`);
    this.token = options.token === undefined ? randomBytes(16).toString("hex") : options.token;
    this.server = options.noListener ? undefined : createServer((c) => this.accept(c));
  }

  static async start(options: FakeHarnessOptions): Promise<FakeHarness> {
    const proc = spawn("sleep", ["600"], { stdio: "ignore" });
    const pid = proc.pid!;
    let start: string | undefined;
    for (let i = 0; i < 100 && start === undefined; i++) {
      start = await processStart(pid);
      if (start === undefined) await new Promise((r) => setTimeout(r, 10));
    }
    const h = new FakeHarness(options, proc, pid, start!);
    live.add(h);
    if (h.server !== undefined) {
      const server = h.server;
      await new Promise<void>((r) => server.listen(h.socketPath, r));
    }
    h.writeFiles();
    return h;
  }

  /** The state file's path. */
  get stateFile(): string {
    return join(this.options.configHome, "sessions", `${this.pid}.json`);
  }

  /** (Re)write the state file and key file as Claude Code 2.1.328 does. */
  writeFiles(overrides: Record<string, unknown> = {}): void {
    const sessions = join(this.options.configHome, "sessions");
    mkdirSync(sessions, { recursive: true, mode: 0o700 });
    const row: Record<string, unknown> = {
      pid: this.pid,
      sessionId: this.options.sid,
      cwd: "/work/fake",
      startedAt: Date.now(),
      procStart: this.procStart,
      version: "2.1.328",
      peerProtocol: this.options.peerProtocol ?? 1,
      peerFeatures: ["notify_idle"],
      kind: "interactive",
      entrypoint: "cli",
      name: "fake",
      status: "idle",
      updatedAt: Date.now(),
      ...overrides,
    };
    if (!this.options.noSocketPath) row.messagingSocketPath = this.socketPath;
    writeFileSync(this.stateFile, JSON.stringify(row));
    if (this.token !== null) {
      const hex = createHash("sha256").update(resolve(this.socketPath)).digest("hex");
      const key = join(sessions, `${this.pid}.${hex}.key`);
      writeFileSync(key, JSON.stringify({ peerToken: this.token, procStart: this.procStart }));
      chmodSync(key, 0o600);
    }
  }

  private accept(conn: Socket): void {
    this.conns.add(conn);
    conn.on("close", () => this.conns.delete(conn));
    conn.on("error", () => {});
    if (this.options.stall) {
      conn.pause();
      return;
    }
    let buf = "";
    let authed = false;
    conn.on("data", (chunk: Buffer) => {
      buf += chunk.toString("utf8");
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const frame = JSON.parse(line) as { type: string; token?: string };
        if (frame.type === "auth") {
          this.auths.push(frame);
          authed = frame.token === this.token;
          // As Claude Code does where auth is required: a bad token ends it.
          if (!authed) conn.destroy();
          continue;
        }
        if (!authed) return void conn.destroy();
        if (frame.type === "user") this.take(frame as UserFrame);
      }
    });
  }

  private take(frame: UserFrame): void {
    const answer = this.answers.length > 1 ? this.answers.shift()! : this.answers[0]!;
    if (answer.kind === "accept") {
      this.users.push(frame);
      for (const w of this.waiters.splice(0)) w();
      return;
    }
    const receipt: Record<string, unknown> =
      answer.action === "bare"
        ? { type: "peer_message_status", status: answer.status }
        : { type: "control", action: "peer_message_status", status: answer.status };
    receipt.msg_id = randomBytes(16).toString("hex");
    if (answer.dropped) {
      receipt.orig_msg_id = "00000000-0000-4000-8000-000000000000";
      receipt.dropped_msg_ids = [frame.msg_id];
    } else receipt.orig_msg_id = frame.msg_id;
    const to = frame.from.replace(/^uds:/, "");
    const c = connect(to, () => c.end(`${JSON.stringify(receipt)}\n`));
    c.on("error", () => {});
  }

  /** Resolve once `n` user frames were taken. */
  async taken(n: number, timeoutMs = 10_000): Promise<UserFrame[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.users.length < n) {
      if (Date.now() > deadline)
        throw new Error(`fake harness: ${this.users.length} of ${n} frames`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 100);
      });
    }
    return this.users.slice(0, n);
  }

  /** Stop serving and end the process; its state file is left behind, as a
   * crash would leave it. */
  async stop(): Promise<void> {
    if (!live.delete(this)) return;
    for (const c of this.conns) c.destroy();
    if (this.server !== undefined) {
      const server = this.server;
      await new Promise<void>((r) => server.close(() => r()));
    }
    if (this.proc.exitCode === null) {
      const gone = new Promise((r) => this.proc.once("exit", r));
      this.proc.kill("SIGKILL");
      await gone;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
