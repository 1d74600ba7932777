import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pushed } from "../../src/client/client.js";
import { LLM_PROMPT_CACHE_TTL_MS } from "../../src/contract/constants.js";
import type {
  LlmRequestInfo,
  LlmStatsModelUsage,
  LlmStatsReadResult,
  LlmStatusReport,
  LlmUsageReadResult,
} from "../../src/contract/llm.js";
import type { PeerInfo } from "../../src/contract/peers.js";
import { localDay } from "../../src/instance/llm/usage.js";
import { readSessionLlm } from "../../src/state/llm-session-file.js";
import {
  FakeMessagesApi,
  OUTPUT_TOKENS,
  overloadBody,
  USAGE_START,
} from "../helpers/fake-messages-api.js";
import { CLI, childEnv, runCli, type TestInstance } from "../helpers/instance.js";
import { type GatewayProcess, llmInstance, startGatewayCli } from "../helpers/llm.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { until } from "../helpers/real-claude.js";

// Issue 13 item 3: `ccmsg gateway` in front of a fake Messages API on
// loopback, reporting to a real instance through its webhook route.

const TOKEN = "local-token-0123456789";
const API_KEY = "sk-ant-secret-never-logged-0123456789";

const requestsOf = (f: Pushed) => f.data as LlmRequestInfo[];

/** A Messages API request body: one conversation is its system prompt and
 * first message (the series), later turns append. */
function body(
  system: string,
  first: string,
  options: { stream?: boolean; ttl?: "1h"; next?: string } = {},
) {
  const later =
    options.next === undefined
      ? []
      : [
          { role: "assistant", content: "ok" },
          {
            role: "user",
            content: [{ type: "text", text: options.next, cache_control: { type: "ephemeral" } }],
          },
        ];
  return JSON.stringify({
    model: "claude-test-1",
    max_tokens: 100,
    stream: options.stream ?? true,
    system: [
      {
        type: "text",
        text: system,
        cache_control: { type: "ephemeral", ...(options.ttl ? { ttl: options.ttl } : {}) },
      },
    ],
    messages: [{ role: "user", content: first }, ...later],
  });
}

async function call(base: string, sid: string, payload: string) {
  const res = await fetch(`${base}/v1/messages`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": API_KEY,
      "anthropic-version": "2023-06-01",
      "x-claude-code-session-id": sid,
    },
    body: payload,
  });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

describe("ccmsg gateway", () => {
  let inst: TestInstance;
  let api: FakeMessagesApi;
  let gw: GatewayProcess;
  let person: Peer;
  const A = newSid();
  const B = newSid();
  const C = newSid();
  const D = newSid();
  const sessions: Peer[] = [];
  /** Before any request: spend is counted under this day or a later one. */
  const startedAt = Date.now();

  beforeAll(async () => {
    inst = await llmInstance({
      sources: { local: { token: TOKEN } },
      prices: { "claude-test": { input: 3, output: 15 } },
    });
    api = await FakeMessagesApi.start();
    gw = await startGatewayCli(inst, api.url);
    person = await Peer.unix(inst.socket);
    await person.helloUser();
    for (const sid of [A, B, C, D]) {
      const s = await Peer.unix(inst.socket);
      await s.helloSession(sid, { cwd: "/tmp" });
      sessions.push(s);
    }
  });
  afterAll(async () => {
    for (const s of sessions) s.close();
    person?.close();
    await gw?.stop();
    await api?.close();
    await inst?.stop();
    expect(contractViolations.splice(0)).toEqual([]);
  });

  it("passes a stream through byte for byte, headers and credentials included", async () => {
    const payload = body("sys-direct", "compare");
    const direct = await call(api.url, A, payload);
    const via = await call(gw.url, A, payload);
    expect(via.status).toBe(200);
    expect(via.bytes.equals(direct.bytes)).toBe(true);
    expect(via.headers.get("content-type")).toBe("text/event-stream");
    expect(via.headers.get("x-fake-echo")).toBe("kept");
    const seen = api.requests.at(-1)!;
    expect(seen.body).toBe(payload);
    expect(seen.headers["x-api-key"]).toBe(API_KEY);
    expect(seen.headers.host).toBe(new URL(api.url).host);
    // A plain JSON answer too.
    const plainPayload = body("sys-direct", "compare", { stream: false });
    const plainDirect = await call(api.url, A, plainPayload);
    const plainVia = await call(gw.url, A, plainPayload);
    expect(plainVia.bytes.equals(plainDirect.bytes)).toBe(true);
  });

  it("passes a 529 overload through and leaves the series as it was", async () => {
    api.overloaded = 1;
    const res = await call(gw.url, B, body("sys-b", "overloaded"));
    expect(res.status).toBe(529);
    expect(res.bytes.toString()).toBe(overloadBody());
    expect(res.headers.get("request-id")).toBe("req_overload");
  });

  it("reports what it saw of the service in llm_status: failing on an overload, the failure share", async () => {
    // So far: two answers (the first test) and one 529 overload.
    const id = new URL(api.url).host;
    const service = (f: Pushed) => (f.data as LlmStatusReport).services.find((x) => x.id === id);
    const snap = await person.subscribe("llm_status");
    const failing =
      service(snap)?.observed?.last_failure?.kind === "overloaded_error"
        ? snap
        : await person.next(
            (f) =>
              f.topic === "llm_status" &&
              service(f)?.observed?.last_failure?.kind === "overloaded_error",
          );
    expect(service(failing)).toMatchObject({
      severity: "warning",
      routes: ["/v1/messages"],
      observed: { state: "failing", last_failure: { status: 529, kind: "overloaded_error" } },
    });
    expect((failing.data as LlmStatusReport).overall.severity).toBe("warning");
    // Two more overloads: most recent requests failed, which is critical.
    api.overloaded = 2;
    await call(gw.url, B, body("sys-b", "overloaded"));
    await call(gw.url, B, body("sys-b", "overloaded"));
    const critical = await person.next(
      (f) => f.topic === "llm_status" && service(f)?.severity === "critical",
    );
    expect((critical.data as LlmStatusReport).overall).toMatchObject({
      severity: "critical",
      service_counts: { critical: 1 },
    });
    // An answer again: reachable, though the share keeps it critical.
    await call(gw.url, A, body("sys-direct", "fine now", { stream: false }));
    const back = await person.next(
      (f) => f.topic === "llm_status" && service(f)?.observed?.state === "reachable",
    );
    expect(service(back)?.observed?.last_success_at).toBeGreaterThan(
      service(back)!.observed!.last_failure!.at!,
    );
    await person.request("topic_unsubscribe", { topic: "llm_status" });
  });

  it("reads each credential's quota from the rate-limit headers (llm_usage_read)", async () => {
    const r = await person.call<LlmUsageReadResult>("llm_usage_read", {});
    expect(r.credentials).toHaveLength(1);
    const [c] = r.credentials;
    expect(c!.name).toMatch(/^key-[0-9a-f]{12}$/);
    expect(JSON.stringify(r)).not.toContain(API_KEY);
    expect(c).toMatchObject({ type: "api_key", support: "observed" });
    expect(c!.snapshot!.windows).toEqual({
      requests: {
        utilization: 0.25,
        status: "allowed",
        reset_at: Date.parse("2099-01-01T00:00:00Z"),
      },
      "5h": { utilization: 0.42, status: "allowed", reset_at: 4070908800_000, window_secs: 18_000 },
    });
    expect(c!.probe_error).toBeUndefined();
    // Nothing to probe with: a refresh says so and shows the last reading.
    const refreshed = await person.call<LlmUsageReadResult>("llm_usage_read", { refresh: true });
    expect(refreshed.credentials[0]!.probe_error).toMatch(/not probed/);
  });

  it("reports series with main by the rule, gateway_active_at, and windows that expire", async () => {
    // (Event times are the gateway's clock, so the instance clock moves only
    // at the end.) C's conversation starts, then a sub-agent whose prompt D
    // also runs (the shared prefix); D has nothing else (all shared: the
    // newest is marked).
    const ours = (f: Pushed) => requestsOf(f).filter((r) => r.sid === C || r.sid === D);
    await person.subscribe("llm_requests");
    await call(gw.url, C, body("sys-main", "hello from C"));
    await call(gw.url, C, body("sys-main", "hello from C", { next: "second turn" }));
    await call(gw.url, C, body("sys-agent", "same task"));
    await call(gw.url, D, body("sys-agent", "same task", { ttl: "1h" }));
    const frame = await person.next(
      (f) =>
        f.topic === "llm_requests" &&
        ours(f).length === 3 &&
        ours(f).every((r) => r.model !== undefined),
    );
    const rows = ours(frame);
    const ofC = rows.filter((r) => r.sid === C);
    const ofD = rows.filter((r) => r.sid === D);
    expect(ofC).toHaveLength(2);
    expect(ofD).toHaveLength(1);
    const sharedPrefix = ofD[0]!.prefix;
    const ownC = ofC.find((r) => r.prefix !== sharedPrefix)!;
    const subC = ofC.find((r) => r.prefix === sharedPrefix)!;
    expect(ownC).toMatchObject({
      main: true,
      model: "claude-test-1",
      cache_ttl_secs: 300,
      status: 200,
    });
    expect(ownC.cache_expires_at).toBe(ownC.received_at + 300_000);
    expect(subC.main).toBe(false);
    expect(ofD[0]).toMatchObject({ main: true, cache_ttl_secs: 3600 });
    expect(ownC.credential).toMatch(/^key-[0-9a-f]{12}$/);

    const peers = await person.subscribe("peers");
    const row = (sid: string) =>
      (peers.data as { peers: PeerInfo[] }).peers.find((p) => p.sid === sid);
    expect(row(C)?.gateway_active_at).toBeGreaterThanOrEqual(ownC.received_at);
    expect(row(D)?.gateway_active_at).toBeGreaterThanOrEqual(ofD[0]!.received_at);
    // The overloaded request marked B busy without opening a window.
    expect(row(B)?.gateway_active_at).toBeGreaterThan(0);
    expect(requestsOf(frame).some((r) => r.sid === B)).toBe(false);

    // Five minutes on, every 5-minute window has ended; D's hour has not.
    const after = person.next(
      (f) => f.topic === "llm_requests" && requestsOf(f).every((r) => r.sid === D),
    );
    await inst.advanceClock(LLM_PROMPT_CACHE_TTL_MS + 1000);
    expect(requestsOf(await after)).toEqual([expect.objectContaining({ sid: D, main: true })]);
  });

  it("sums spend per day, credential and model, priced from the config's table (llm_stats_read)", async () => {
    // Every request through the gateway that ended with usage: two in the
    // first test, one in the status test, four in the series test (the
    // overloads had none).
    // The instance is new, so every day it counted is this file's; a run
    // across local midnight splits the requests between two days, and the
    // sums over the days are what is checked.
    const stats = await until("seven requests counted", async () => {
      const r = await person.call<LlmStatsReadResult>("llm_stats_read", {});
      const days = Object.values(r.days);
      const credentials = new Set(days.flatMap((d) => Object.keys(d.credentials)));
      const models = days.flatMap((d) => Object.values(d.credentials).flatMap(Object.entries));
      const sum = (k: keyof LlmStatsModelUsage) =>
        models.reduce((n, [, u]) => n + ((u[k] as number | undefined) ?? 0), 0);
      const usage = {
        requests: sum("requests"),
        input_tokens: sum("input_tokens"),
        output_tokens: sum("output_tokens"),
        cache_creation_input_tokens: sum("cache_creation_input_tokens"),
        cache_read_input_tokens: sum("cache_read_input_tokens"),
        usd: sum("usd"),
      };
      const total_usd = days.reduce((n, d) => n + (d.total_usd ?? 0), 0);
      const names = new Set(models.map(([m]) => m));
      return usage.requests === 7
        ? { days: Object.keys(r.days), credentials, names, usage, total_usd }
        : undefined;
    });
    // Each request is counted under its own local day.
    const possible = new Set([localDay(startedAt), localDay(Date.now())]);
    expect(stats.days.every((d) => possible.has(d))).toBe(true);
    expect([...stats.credentials]).toEqual([expect.stringMatching(/^key-[0-9a-f]{12}$/)]);
    expect([...stats.names]).toEqual(["claude-test-1"]);
    expect(stats.usage).toMatchObject({
      input_tokens: 7 * USAGE_START.input_tokens,
      output_tokens: 7 * OUTPUT_TOKENS,
      cache_creation_input_tokens: 7 * USAGE_START.cache_creation_input_tokens,
      cache_read_input_tokens: 7 * USAGE_START.cache_read_input_tokens,
    });
    // $3 / $15 per MTok; cache writes ×1.25 (5 min) or ×2 (D's hour), reads ×0.1.
    const base = 12 * 3 + 42 * 15 + 4096 * 0.3;
    const expected = (6 * (base + 2048 * 3.75) + (base + 2048 * 6)) / 1e6;
    expect(stats.usage.usd).toBeCloseTo(expected, 9);
    expect(stats.total_usd).toBeCloseTo(expected, 9);
  });

  it("writes each session's busy mark, cache window and cost for the statusline and HUD", async () => {
    const file = await until("C's file with its three requests", async () => {
      const f = readSessionLlm(inst.stateDir, C);
      return f?.requests === 3 ? f : undefined;
    });
    expect(file.tokens).toEqual({
      input: 3 * USAGE_START.input_tokens,
      output: 3 * OUTPUT_TOKENS,
      cache_creation: 3 * USAGE_START.cache_creation_input_tokens,
      cache_read: 3 * USAGE_START.cache_read_input_tokens,
    });
    expect(file.usd).toBeCloseTo((3 * (12 * 3 + 42 * 15 + 4096 * 0.3 + 2048 * 3.75)) / 1e6, 9);
    expect(file.in_flight).toBe(false);
    expect(file.gateway_active_at).toBeGreaterThan(0);
    // D's hour-long window is still warm: the statusline counts it down and
    // shows the gateway's cost rather than the harness's. Its answer is held
    // open first: `ccmsg peers` marks D busy while it streams, however long
    // that takes (no wall-clock window to beat).
    const release = api.hold();
    const answer = call(gw.url, D, body("sys-agent", "same task", { ttl: "1h" }));
    await until("D's file with a request in flight", async () =>
      readSessionLlm(inst.stateDir, D)?.in_flight === true ? true : undefined,
    );
    const peersText = await runCli(["peers", "--text"], {
      ...inst.env,
      CCMSG_STATE_DIR: inst.stateDir,
    });
    expect(peersText.stdout).toMatch(new RegExp(`● ${D.slice(0, 8)}`));
    expect(peersText.stdout).toContain("● busy: inference in flight");
    release();
    expect((await answer).status).toBe(200);
    await until("D's file with its second request", async () => {
      const f = readSessionLlm(inst.stateDir, D);
      return f?.requests === 2 && !f.in_flight ? true : undefined;
    });
    const line = await runCli(
      ["statusline", "--state-dir", inst.stateDir],
      { ...inst.env, NO_COLOR: "1" },
      JSON.stringify({
        session_id: D,
        model: { display_name: "Test" },
        cost: { total_cost_usd: 99 },
      }),
    );
    expect(line.stdout).toMatch(/\$0\.03 12ktok/);
    expect(line.stdout).not.toContain("$99");
    // (The hour counts down from D's request: some minutes may pass on a
    // loaded machine.)
    expect(line.stdout).toMatch(/cache (5\dm|1h)/);
    // The HUD takes its cost section from the gateway too.
    const env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
    const dFile = readSessionLlm(inst.stateDir, D)!;
    const hud = await runCli(["hud", "--sid", D, "--json"], env);
    const cost = (JSON.parse(hud.stdout) as { cost: Record<string, unknown> }).cost;
    expect(cost.sessionUsd).toBeCloseTo(dFile.usd!, 9);
    expect(cost.tokens).toMatchObject({
      cacheCreation: 2 * USAGE_START.cache_creation_input_tokens,
    });
    const hudText = await runCli(["hud", "--sid", D, "--text"], env);
    expect(hudText.stdout).toMatch(
      /llm +(busy|idle), cache warm (5\dm|1h) more \(1h window\); cost from the gateway \(2 requests\)/,
    );
  });

  it("marks in `ccmsg peers` a session whose request is open, however long ago it started", async () => {
    // Events a minute old, beyond the 15 s window whatever the machine's
    // speed: E's answer is still streaming, F's ended.
    const [E, F] = [newSid(), newSid()];
    for (const sid of [E, F]) {
      const s = await Peer.unix(inst.socket);
      await s.helloSession(sid, { cwd: "/tmp" });
      sessions.push(s);
    }
    const t = Date.now() - 60_000;
    const events = [
      { sid: E, prefix: "long", received_at: t, status: 200 },
      { sid: F, prefix: "done", received_at: t, completed_at: t + 1000, status: 200 },
    ];
    const res = await fetch(new URL("webhook/local", inst.http), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify(events),
    });
    expect(res.status).toBe(204);
    await until("E's and F's files", async () =>
      readSessionLlm(inst.stateDir, E)?.in_flight === true &&
      readSessionLlm(inst.stateDir, F)?.in_flight === false
        ? true
        : undefined,
    );
    const text = (
      await runCli(["peers", "--text"], { ...inst.env, CCMSG_STATE_DIR: inst.stateDir })
    ).stdout;
    expect(text).toMatch(new RegExp(`● ${E.slice(0, 8)}`));
    expect(text).toMatch(new RegExp(`^  ${F.slice(0, 8)}`, "m"));
  });

  it("prints the ANTHROPIC_BASE_URL that points a shell's sessions at it, only while it listens", async () => {
    const env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
    const listen = new URL(gw.url).host;
    // Through a shell as the README says: eval, then the harness inherits it.
    const sh = await new Promise<string>((resolve, reject) => {
      const child = spawn(
        "/bin/sh",
        [
          "-c",
          'eval "$("$NODE" "$CLI" gateway env --listen "$LISTEN")" && printenv ANTHROPIC_BASE_URL',
        ],
        { env: { ...childEnv(env), NODE: process.execPath, CLI, LISTEN: listen } },
      );
      let out = "";
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString();
      });
      child.on("error", reject);
      child.on("close", () => resolve(out));
    });
    expect(sh).toBe(`${gw.url}\n`);
    const json = await runCli(["gateway", "env", "--listen", listen, "--json"], env);
    expect(JSON.parse(json.stdout)).toEqual({ ANTHROPIC_BASE_URL: gw.url });
    // A port nobody listens on: nothing printed, so an eval changes nothing.
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const none = await runCli(["gateway", "env", "--listen", `127.0.0.1:${port}`], env);
    expect(none.code).not.toBe(0);
    expect(none.stdout).toBe("");
    expect(none.stderr).toContain(`nothing listens at http://127.0.0.1:${port}`);
  });

  it("never writes a credential to its output or the instance's log", async () => {
    const log = readFileSync(join(inst.stateDir, "daemon.log"), "utf8");
    expect(log).not.toContain(API_KEY);
    expect(log).not.toContain(TOKEN);
    expect(gw.stderr()).not.toContain(API_KEY);
  });
});

describe("ccmsg gateway with no config at all", () => {
  it("reports to this user's own instance: llm_* offered without a restart, a main series and gateway_active_at", async () => {
    const inst = await llmInstance(undefined);
    const api = await FakeMessagesApi.start();
    const person = await Peer.unix(inst.socket);
    const session = await Peer.unix(inst.socket);
    let gw: GatewayProcess | undefined;
    try {
      // Nothing of the LLM side before the first report.
      const caps = async (p: Peer) =>
        ((await p.helloUser()) as { capabilities: string[] }).capabilities;
      expect(await caps(person)).not.toContain("llm_stats");
      const sid = newSid();
      await session.helloSession(sid, { cwd: "/tmp" });
      gw = await startGatewayCli(inst, api.url);
      expect(gw.stderr()).not.toContain("not reporting");
      // A webhook batch under `local` without the owner's secret is refused.
      const forged = await fetch(`${inst.http}webhook/local`, {
        method: "POST",
        headers: { authorization: "Bearer not-the-owner", "content-type": "application/json" },
        body: "[]",
      });
      expect(forged.status).toBe(401);

      expect((await call(gw.url, sid, body("sys-zero", "hello"))).status).toBe(200);
      const later = await until("the llm capabilities", async () => {
        const p = await Peer.unix(inst.socket);
        if ((await caps(p)).includes("llm_stats")) return p;
        p.close();
        return undefined;
      });
      const frame = await later.subscribe("llm_requests");
      expect(requestsOf(frame).filter((r) => r.sid === sid)).toEqual([
        expect.objectContaining({ main: true, model: "claude-test-1" }),
      ]);
      const peers = (await later.subscribe("peers")).data as { peers: PeerInfo[] };
      expect(peers.peers.find((p) => p.sid === sid)?.gateway_active_at).toBeGreaterThan(0);
      later.close();
    } finally {
      session.close();
      person.close();
      await gw?.stop();
      await api.close();
      await inst.stop();
    }
  });
});
