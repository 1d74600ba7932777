import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CLI, childEnv, runCli, sharedInstance, startInstance } from "../helpers/instance.js";
import { contractViolations, newSid } from "../helpers/peer.js";
import { git, makeRepo, tempDir } from "../hud/helpers.js";

// `ccmsg subscribe` as a session's long-lived connection: it greets with the
// same meta as `ccmsg hello` (issue 8, item 21).

const shared = sharedInstance();
afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

/** A running `ccmsg subscribe …`: its stdout frames, awaitable one by one. */
class Subscriber {
  readonly frames: Record<string, unknown>[] = [];
  readonly exited: Promise<number | null>;
  stderr = "";
  private waiters: { pred: (f: Record<string, unknown>) => boolean; resolve: () => void }[] = [];
  private readonly child: ChildProcess;

  constructor(args: string[], extra: Record<string, string>, cwd?: string) {
    this.child = spawn(process.execPath, [CLI, "subscribe", ...args], {
      env: childEnv(extra),
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let buffered = "";
    this.child.stdout!.on("data", (c: Buffer) => {
      buffered += c.toString();
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        const frame = JSON.parse(buffered.slice(0, nl)) as Record<string, unknown>;
        buffered = buffered.slice(nl + 1);
        this.frames.push(frame);
        for (const w of this.waiters.filter((x) => x.pred(frame))) {
          this.waiters.splice(this.waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    });
    this.child.stderr!.on("data", (c: Buffer) => {
      this.stderr += c.toString();
    });
    this.exited = new Promise((resolve) => this.child.on("exit", (code) => resolve(code)));
  }

  /** Resolves once `count` frames matching `pred` have arrived in all. */
  seen(pred: (f: Record<string, unknown>) => boolean, count = 1): Promise<void> {
    if (this.frames.filter(pred).length >= count) return Promise.resolve();
    return new Promise((resolve) => {
      const check = (f: Record<string, unknown>) =>
        pred(f) && this.frames.filter(pred).length >= count;
      this.waiters.push({ pred: check, resolve });
    });
  }

  async stop(): Promise<void> {
    this.child.kill("SIGINT");
    await this.exited;
  }
}

const inboxSnapshot = (f: Record<string, unknown>) => f.topic === "inbox" && f.snapshot === true;

describe("the meta every greeting of a session carries", () => {
  it("a session that only runs `ccmsg subscribe inbox` is found as a candidate in its repository", async () => {
    const repo = makeRepo(tempDir(), "gadgets");
    const [gone, live] = [newSid(), newSid()];
    // `gone` said hello from the repository and left: it reads as disappeared.
    expect(
      (await runCli(["hello", "--sid", gone], shared.env, undefined, { cwd: repo })).code,
    ).toBe(0);
    const sub = new Subscriber(["inbox"], { ...shared.env, CLAUDE_CODE_SESSION_ID: live }, repo);
    await sub.seen(inboxSnapshot);
    const r = await runCli(["post", gone, "anyone there?", "--json"], shared.env);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      delivered: false,
      reason: "disappeared",
      candidates: [{ sid: live, ws: "gadgets" }],
    });
    await sub.stop();
  });

  it("the HUD's repo is what peers shows for the same checkout, with or without an origin", async () => {
    const withOrigin = makeRepo(tempDir(), "widgets");
    const noOrigin = makeRepo(tempDir(), "sprockets");
    git(noOrigin, "remote", "remove", "origin");
    for (const [repo, expected] of [
      [withOrigin, "acme/widgets"],
      [noOrigin, "sprockets"],
    ] as const) {
      const sid = newSid();
      const sub = new Subscriber(["inbox"], { ...shared.env, CLAUDE_CODE_SESSION_ID: sid }, repo);
      await sub.seen(inboxSnapshot);
      const peers = JSON.parse((await runCli(["peers", "--json"], shared.env)).stdout) as {
        peers: { sid: string; repo: string; ws: string }[];
      };
      const row = peers.peers.find((p) => p.sid === sid);
      const hud = await runCli(["hud", "--json", "--sid", sid], shared.env, undefined, {
        cwd: tempDir(),
      });
      expect(hud.code, hud.stderr).toBe(0);
      const context = (JSON.parse(hud.stdout) as { context: { repo: string; worktree: string } })
        .context;
      expect({ repo, peers: row?.repo, hud: context.repo }).toEqual({
        repo,
        peers: expected,
        hud: expected,
      });
      expect(context.worktree).toBe(join(repo));
      await sub.stop();
    }
  });
});

// When its instance restarts, `ccmsg subscribe` reconnects and subscribes
// again (issue 8, item 22).
describe("subscribe across a restart", () => {
  it("reconnects to the restarted instance, subscribes again and receives what is sent", async () => {
    const first = await startInstance();
    const ownEnv = { ...first.env, CCMSG_STATE_DIR: first.stateDir };
    const S = newSid();
    const sub = new Subscriber(["inbox"], { ...ownEnv, CLAUDE_CODE_SESSION_ID: S });
    const gone = sub.exited.then((code) => {
      throw new Error(`subscribe exited (${code}): ${sub.stderr}`);
    });
    gone.catch(() => {}); // it exits when stopped at the end
    await Promise.race([sub.seen(inboxSnapshot), gone]);
    await first.stop();
    await Promise.race([sub.seen((f) => f.ev === "restarting"), gone]);
    const second = await startInstance({ stateDir: first.stateDir, env: first.env });
    await Promise.race([sub.seen(inboxSnapshot, 2), gone]);
    const r = await runCli(["post", S, "after the restart", "--json"], ownEnv);
    expect(JSON.parse(r.stdout)).toEqual({ delivered: true });
    await Promise.race([
      sub.seen(
        (f) =>
          f.topic === "inbox" &&
          f.snapshot === undefined &&
          JSON.stringify(f.data).includes("after the restart"),
      ),
      gone,
    ]);
    await sub.stop();
    await second.stop();
  });

  it("--exit-on-restart exits with status 0 when the instance restarts", async () => {
    const own = await startInstance();
    const sub = new Subscriber(["inbox", "--exit-on-restart"], {
      ...own.env,
      CCMSG_STATE_DIR: own.stateDir,
      CLAUDE_CODE_SESSION_ID: newSid(),
    });
    const early = sub.exited.then((code) => {
      throw new Error(`subscribe exited (${code}) before the restart: ${sub.stderr}`);
    });
    early.catch(() => {}); // it is meant to exit, later
    await Promise.race([sub.seen(inboxSnapshot), early]);
    await own.stop();
    expect(await sub.exited).toBe(0);
    expect(sub.frames.at(-1)).toMatchObject({ ev: "restarting" });
  });
});
