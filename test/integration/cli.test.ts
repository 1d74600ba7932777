import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { requiredPath } from "../helpers/env.js";
import { CLI, childEnv, isolatedHome, runCli, sharedInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

const shared = sharedInstance();
afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

async function listener(sid: string): Promise<Peer> {
  const p = await Peer.unix(shared.inst.socket);
  await p.helloSession(sid);
  await p.subscribe("inbox");
  return p;
}

async function nextMessage(
  p: Peer,
): Promise<{ from: string; text: string; mid: string; reply_to?: string }> {
  const f = await p.next((x) => x.topic === "inbox" && !x.snapshot);
  return (f.data as never[])[0]!;
}

describe("who the CLI speaks as", () => {
  it("--sid, else CODEX_THREAD_ID, else CLAUDE_CODE_SESSION_ID, else the person", async () => {
    const B = newSid();
    const b = await listener(B);
    const [X, T, A] = [newSid(), newSid(), newSid()];
    const cases: [Record<string, string>, string[], string][] = [
      [{ CLAUDE_CODE_SESSION_ID: A }, [], A],
      [{ CLAUDE_CODE_SESSION_ID: A, CODEX_THREAD_ID: T }, [], T],
      [{ CLAUDE_CODE_SESSION_ID: A, CODEX_THREAD_ID: T }, ["--sid", X], X],
      [{}, [], "user"],
    ];
    for (const [extra, flags, from] of cases) {
      const arrival = nextMessage(b);
      const r = await runCli(["post", B, "who", ...flags], { ...shared.env, ...extra });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ delivered: true });
      expect((await arrival).from).toBe(from);
    }
    b.close();
  });
});

describe("output and errors", () => {
  it("prints the reply as JSON when piped or with --json, readable text with --text", async () => {
    const B = newSid();
    await Peer.unix(shared.inst.socket).then((p) => p.helloSession(B));
    const json = await runCli(["post", B, "hi", "--json"], shared.env);
    expect(JSON.parse(json.stdout)).toEqual({ delivered: false, reason: "preparing" });
    const text = await runCli(["post", B, "hi", "--text"], shared.env);
    expect(text.stdout).toBe("held (preparing)\n");
  });

  it("errors go to stderr as {error:{code,msg}} with exit 1", async () => {
    const unknown = await runCli(["post", newSid(), "x"], shared.env);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe("");
    expect(JSON.parse(unknown.stderr)).toEqual({
      error: { code: "session_not_found", msg: expect.any(String) },
    });
    const bad = await runCli(["frobnicate"], shared.env);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr).error.code).toBe("invalid_args");
    const badFlag = await runCli(["ping", "--bogus"], shared.env);
    expect(JSON.parse(badFlag.stderr).error.code).toBe("invalid_args");
  });

  it("help names every command", async () => {
    const r = await runCli(["--help"], shared.env);
    for (const cmd of [
      "daemon",
      "ping",
      "hello",
      "stopping",
      "post",
      "reply",
      "notify",
      "inbox",
      "peers",
      "subscribe",
      "kv",
    ]) {
      expect(r.stdout).toContain(`ccmsg ${cmd}`);
    }
  });
});

describe("replying", () => {
  it("reply --to threads the message; reply without --to notifies the person", async () => {
    const [A, B] = [newSid(), newSid()];
    const a = await listener(A);
    const person = await Peer.unix(shared.inst.socket);
    await person.helloUser();
    await person.call("topic_subscribe", { topic: "notify" });
    const r1 = await runCli(["reply", `${shared.inst.id}/1`, "--to", A, "thanks"], {
      ...shared.env,
      CLAUDE_CODE_SESSION_ID: B,
    });
    expect(r1.code, r1.stderr).toBe(0);
    const m = await nextMessage(a);
    expect(m).toMatchObject({ from: B, text: "thanks", reply_to: `${shared.inst.id}/1` });
    const r2 = await runCli(["reply", m.mid, "done"], { ...shared.env, CLAUDE_CODE_SESSION_ID: A });
    expect(r2.code, r2.stderr).toBe(0);
    const note = await person.next((f) => f.topic === "notify");
    expect(note.data).toMatchObject({ sid: A, text: "done" });
    const asPerson = await runCli(["reply", m.mid, "done"], shared.env);
    expect(JSON.parse(asPerson.stderr).error.code).toBe("invalid_args");
    a.close();
    person.close();
  });
});

describe("harness hooks", () => {
  it("hello --hook greets from the SessionStart payload; stopping --hook makes the loss a pause", async () => {
    const B = newSid();
    const projects = join(requiredPath(shared.env, "CLAUDE_CONFIG_DIR"), "projects", "-work-b");
    mkdirSync(projects, { recursive: true });
    const transcript = join(projects, `${B}.jsonl`);
    writeFileSync(transcript, "");
    const hook = await runCli(
      ["hello", "--hook"],
      shared.env,
      JSON.stringify({
        session_id: B,
        transcript_path: transcript,
        cwd: "/work/b",
        hook_event_name: "SessionStart",
        source: "startup",
      }),
    );
    expect(hook.code).toBe(0);
    expect(JSON.parse(hook.stdout)).toMatchObject({
      greeted: true,
      sid: B,
      instance: shared.inst.id,
    });
    const stop = await runCli(
      ["stopping", "--hook"],
      shared.env,
      // As Claude Code sends it: the payload names the session's directory.
      JSON.stringify({
        session_id: B,
        cwd: "/work/b",
        hook_event_name: "SessionEnd",
        reason: "prompt_input_exit",
      }),
    );
    expect(stop.code).toBe(0);
    const { stopped_at } = JSON.parse(stop.stdout);
    const peers = JSON.parse((await runCli(["peers", "--json"], shared.env)).stdout);
    expect(peers.last_live.find((r: { sid: string }) => r.sid === B)).toMatchObject({
      state: "paused",
      stopped_at,
      cwd: "/work/b",
      transcript_path: transcript,
    });
  });

  it("a transcript outside the config home's projects/ is refused and logged, the greeting still succeeds", async () => {
    const B = newSid();
    const r = await runCli(
      ["hello", "--sid", B, "--cwd", "/w", "--transcript-path", "/etc/passwd"],
      shared.env,
    );
    expect(r.code, r.stderr).toBe(0);
    const peers = JSON.parse((await runCli(["peers", "--json"], shared.env)).stdout);
    const row = [...peers.peers, ...peers.last_live].find((x: { sid: string }) => x.sid === B);
    expect(row).toBeDefined();
    expect(row).not.toHaveProperty("transcript_path");
  });

  it("hello --hook never fails a session: without an instance it says so and exits 0", async () => {
    const { env: lone } = isolatedHome();
    const r = await runCli(
      ["hello", "--hook", "--no-start"],
      lone,
      JSON.stringify({ session_id: newSid(), cwd: "/x" }),
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ greeted: false, reason: expect.any(String) });
  });
});

describe("starting an instance", () => {
  it("starts one in the background when none answers; --no-start refuses", async () => {
    const { env: fresh } = isolatedHome();
    const quiet = { ...fresh, CCMSG_HTTP: "127.0.0.1:0" };
    const refused = await runCli(["ping", "--no-start"], quiet);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stderr).error.code).toBe("instance_unreachable");
    const ping = await runCli(["ping", "--json"], quiet);
    expect(ping.code, ping.stderr).toBe(0);
    const { pid } = JSON.parse(ping.stdout);
    const status = JSON.parse((await runCli(["daemon", "status", "--json"], quiet)).stdout);
    expect(status).toMatchObject({ running: true, pid });
    expect(JSON.parse((await runCli(["daemon", "stop", "--json"], quiet)).stdout)).toEqual({
      stopped: true,
    });
    expect(JSON.parse((await runCli(["daemon", "status", "--json"], quiet)).stdout)).toEqual({
      running: false,
    });
    expect(() => process.kill(pid, 0)).toThrow();
  });
});

describe("kv and subscribe", () => {
  it("kv set/get/list/del as the person", async () => {
    expect((await runCli(["kv", "set", "notes", "a", '{"x":1}'], shared.env)).code).toBe(0);
    await runCli(["kv", "set", "notes", "b", "plain words", "--string"], shared.env);
    expect(
      JSON.parse((await runCli(["kv", "get", "notes", "a"], shared.env)).stdout).value,
    ).toEqual({
      x: 1,
    });
    const list = JSON.parse((await runCli(["kv", "list", "notes"], shared.env)).stdout);
    expect(list.entries.map((e: { key: string; value: unknown }) => [e.key, e.value])).toEqual([
      ["a", { x: 1 }],
      ["b", "plain words"],
    ]);
    await runCli(["kv", "del", "notes", "a"], shared.env);
    const missing = await runCli(["kv", "get", "notes", "a"], shared.env);
    expect(JSON.parse(missing.stderr).error.code).toBe("not_found");
  });

  it("kv run inside a session still speaks as the person (the store is the person's)", async () => {
    const inSession = { ...shared.env, CLAUDE_CODE_SESSION_ID: newSid() };
    const set = await runCli(["kv", "set", "notes", "from-session", "1"], inSession);
    expect(set.code, set.stderr).toBe(0);
    const got = await runCli(["kv", "get", "notes", "from-session"], inSession);
    expect(JSON.parse(got.stdout).value).toBe(1);
  });

  it("subscribe streams frames as NDJSON", async () => {
    const child = spawn(process.execPath, [CLI, "subscribe", "notify", "kv:live"], {
      env: childEnv(shared.env),
    });
    let out = "";
    let onSnapshot!: () => void;
    const snapshot = new Promise<void>((resolve) => {
      onSnapshot = resolve;
    });
    const lines = new Promise<string[]>((resolve) => {
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString();
        if (out.includes('"topic":"kv:live"')) onSnapshot();
        const all = out.split("\n").filter(Boolean);
        if (all.some((l) => l.includes('"topic":"notify"'))) resolve(all);
      });
    });
    await snapshot;
    const A = newSid();
    await runCli(["notify", "heads up"], { ...shared.env, CLAUDE_CODE_SESSION_ID: A });
    const got = (await lines).map((l) => JSON.parse(l));
    expect(got.find((f) => f.topic === "notify").data).toMatchObject({ sid: A, text: "heads up" });
    child.kill("SIGINT");
  });
});
