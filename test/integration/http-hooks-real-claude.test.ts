import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inboxRows } from "../helpers/db.js";
import { FakeModel } from "../helpers/fake-model.js";
import {
  isolatedHome,
  ROOT,
  runCli,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { CLAUDE, claudeSetup, until } from "../helpers/real-claude.js";

// The hot hooks as http hooks (DR-0058) in the REAL Claude Code (harness
// spec §11) with ccmsg's plugin installed: a held message reaches the model
// through the instance's hook route exactly once; the hook token opens that
// route and nothing else; with the instance down the prompt still goes
// through. (The PreToolUse decision through the route is in
// reservations-real-claude.test.ts, which runs on the same plugin.)

const BIN = join(ROOT, "node_modules", ".bin");
let inst: TestInstance;
let model: FakeModel;
let cwd: string;
let claudeEnv: Record<string, string>;
let hooks: {
  hooks: Record<
    string,
    { hooks: { type: string; url?: string; headers?: Record<string, string> }[] }[]
  >;
};

function runClaude(args: string[]) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
    const run = spawn(CLAUDE, args, { cwd, env: claudeEnv, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    run.stdout.on("data", (c: Buffer) => {
      out += c.toString();
    });
    run.stderr.on("data", (c: Buffer) => {
      err += c.toString();
    });
    const timer = setTimeout(() => {
      run.kill("SIGKILL");
      reject(new Error(`claude ${args.join(" ")} still running after 60 s`));
    }, 60_000);
    run.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

beforeAll(async () => {
  const { env } = isolatedHome();
  inst = await startInstance({ env });
  model = await FakeModel.start(() => ({ text: "ok" }));
  cwd = join(env.HOME!, "widgets");
  mkdirSync(cwd, { recursive: true });
  claudeEnv = claudeSetup(
    { HOME: env.HOME!, CLAUDE_CONFIG_DIR: env.CLAUDE_CONFIG_DIR! },
    cwd,
    model.url,
    // Whatever a session starts speaks to this test's state directory.
    {
      PATH: `${BIN}:${process.env.PATH}`,
      XDG_RUNTIME_DIR: env.XDG_RUNTIME_DIR!,
      XDG_STATE_HOME: env.XDG_STATE_HOME!,
      CCMSG_STATE_DIR: "",
    },
  );
  claudeEnv.CCMSG_STATE_DIR = inst.stateDir;
  const installed = await runCli(["plugin", "install", "claude", "--json"], {
    ...claudeEnv,
    XDG_STATE_HOME: env.XDG_STATE_HOME,
    XDG_CONFIG_HOME: env.XDG_CONFIG_HOME,
    CCMSG_STATE_DIR: inst.stateDir,
  });
  expect(installed.code, installed.stderr).toBe(0);
  hooks = JSON.parse(
    readFileSync(join(inst.stateDir, "plugins", "claude", "hooks", "hooks.json"), "utf8"),
  );
}, 60_000);

afterAll(async () => {
  await model?.close();
  await inst?.stop();
  expect(contractViolations.splice(0)).toEqual([]);
});

const promptHook = () => hooks.hooks.UserPromptSubmit![0]!.hooks[0]!;

describe("http hooks, with the real Claude Code", () => {
  it("a held message reaches the model through the http UserPromptSubmit hook, exactly once", async () => {
    expect(promptHook()).toMatchObject({ type: "http" });
    const first = await runClaude(["-p", "hello", "--output-format", "json"]);
    expect(first.code, first.err).toBe(0);
    const sid = (JSON.parse(first.out) as { session_id: string }).session_id;
    const sender = await Peer.unix(inst.socket);
    await sender.helloSession(newSid(), { repo: "widgets" });
    const text = "held for the http hook 7f3a";
    expect(await sender.call("message_send", { to: sid, text })).toMatchObject({
      delivered: false,
    });
    sender.close();

    const before = model.requests.length;
    const resumed = await runClaude(["-p", "--resume", sid, "carry on", "--output-format", "json"]);
    expect(resumed.code, resumed.err).toBe(0);
    const mine = model.requests.slice(before).filter((r) => r.sid === sid);
    expect(mine.at(-1)!.raw.split(text).length - 1).toBe(1);
    await until("recorded delivered", () =>
      inboxRows(inst.stateDir).some((r) => r.sid === sid && r.state === "delivered")
        ? true
        : undefined,
    );
    // The next prompt is not given it again.
    const mark = model.requests.length;
    const again = await runClaude(["-p", "--resume", sid, "and again", "--output-format", "json"]);
    expect(again.code, again.err).toBe(0);
    const next = model.requests.slice(mark).filter((r) => r.sid === sid);
    expect(next.at(-1)!.raw.split(text).length - 1).toBe(1);
  }, 150_000);

  it("the hook token answers hooks and opens nothing else", async () => {
    const { url, headers } = promptHook();
    const auth = { authorization: headers!.Authorization! };
    const body = JSON.stringify({ hook_event_name: "UserPromptSubmit", session_id: newSid() });
    const ok = await fetch(url!, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body,
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({});
    const wrong = await fetch(url!, {
      method: "POST",
      headers: { authorization: "Bearer nope", "content-type": "application/json" },
      body,
    });
    expect(wrong.status).toBe(401);
    for (const path of ["/api/sessions", "/api/inbox", "/"]) {
      const other = await fetch(new URL(path, url), { headers: auth });
      expect(other.status, path).toBe(401);
    }
    // Nor the WebSocket (the wire ops).
    const ws = await fetch(new URL("/ws", url), {
      headers: {
        ...auth,
        connection: "Upgrade",
        upgrade: "websocket",
        "sec-websocket-version": "13",
        "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
      },
    }).catch(() => undefined);
    expect(ws === undefined || ws.status === 401).toBe(true);
  });

  it("with the instance down, a prompt still reaches the model", async () => {
    await inst.stop();
    const before = model.requests.length;
    const run = await runClaude(["-p", "still there? 9c1d", "--output-format", "json"]);
    expect(run.code, run.err).toBe(0);
    expect(model.requests.slice(before).some((r) => r.raw.includes("still there? 9c1d"))).toBe(
      true,
    );
    // A session's start may start the instance again (SessionStart stays a
    // command hook for that): once it answers, stop it.
    await until(
      "the instance a hook started",
      () => (existsSync(join(inst.stateDir, "instance.json")) ? true : undefined),
      30_000,
    ).catch(() => undefined);
    await runCli(["daemon", "stop", "--state-dir", inst.stateDir], inst.env);
  }, 90_000);
});
