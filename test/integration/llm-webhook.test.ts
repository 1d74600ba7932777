import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pushed } from "../../src/client/client.js";
import { LLM_PROMPT_CACHE_TTL_MS } from "../../src/contract/constants.js";
import type { LlmRequestInfo } from "../../src/contract/llm.js";
import type { PeerInfo } from "../../src/contract/peers.js";
import type { TestInstance } from "../helpers/instance.js";
import { llmInstance } from "../helpers/llm.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Issue 13 items 1-2: the webhook route (contract §1.1) feeding `llm_requests`
// (§5.4) and `gateway_active_at` (§6.2), on a real instance over real sockets.

const TOKEN = "tok-0123456789abcdef";

function post(
  inst: TestInstance,
  path: string,
  body: string | Buffer,
  token: string | null = TOKEN,
): Promise<Response> {
  return fetch(new URL(path, inst.http), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    body,
  });
}

const requestsOf = (f: Pushed) => f.data as LlmRequestInfo[];

describe("without a webhook source", () => {
  it("no LLM capability is offered and every source is unknown", async () => {
    const inst = await llmInstance(undefined);
    try {
      const person = await Peer.unix(inst.socket);
      const hello = (await person.helloUser()) as { capabilities: string[] };
      expect(hello.capabilities).not.toContain("llm_events");
      for (const c of ["llm_stats", "llm_usage", "llm_status"])
        expect(hello.capabilities).not.toContain(c);
      const stats = await person.request("llm_stats_read", {});
      expect(stats.error?.code).toBe("capability_unavailable");
      const r = await person.request("topic_subscribe", { topic: "llm_requests" });
      expect(r.error?.code).toBe("capability_unavailable");
      expect((await post(inst, "webhook/ext", "[]")).status).toBe(404);
      person.close();
    } finally {
      await inst.stop();
    }
  });
});

describe("the webhook route and llm_requests", () => {
  let inst: TestInstance;
  let person: Peer;
  const A = newSid();
  const B = newSid();
  const sessions: Peer[] = [];
  beforeAll(async () => {
    inst = await llmInstance({ sources: { ext: { token: TOKEN } } });
    person = await Peer.unix(inst.socket);
    const hello = (await person.helloUser()) as { capabilities: string[] };
    expect(hello.capabilities).toContain("llm_events");
    for (const c of ["llm_stats", "llm_usage", "llm_status"])
      expect(hello.capabilities).toContain(c);
    for (const sid of [A, B]) {
      const s = await Peer.unix(inst.socket);
      await s.helloSession(sid, { cwd: "/tmp" });
      sessions.push(s);
    }
  });
  afterAll(async () => {
    for (const s of sessions) s.close();
    person.close();
    await inst.stop();
    expect(contractViolations.splice(0)).toEqual([]);
  });

  it("refuses an unknown source (404), a bad or missing token (401) and a body over 1 MiB (413)", async () => {
    expect((await post(inst, "webhook/nope", "[]")).status).toBe(404);
    expect((await post(inst, "webhook/ext", "[]", "tok-wrong-wrong-wrong")).status).toBe(401);
    expect((await post(inst, "webhook/ext", "[]", null)).status).toBe(401);
    // The owner's own secret is no source token.
    const owner = readFileSync(join(inst.stateDir, "owner.secret"), "utf8").trim();
    expect((await post(inst, "webhook/ext", "[]", owner)).status).toBe(401);
    const big = Buffer.alloc(1024 * 1024 + 10, 0x20);
    big[0] = 0x5b;
    big[big.length - 1] = 0x5d;
    expect((await post(inst, "webhook/ext", big)).status).toBe(413);
    // A reverse proxy's prefix is allowed: the route is matched on the path's end.
    expect((await post(inst, "some/prefix/webhook/ext", "[]")).status).toBe(204);
  });

  it("applies nothing of a batch with one malformed item (400)", async () => {
    const snap = await person.subscribe("llm_requests");
    expect(requestsOf(snap)).toEqual([]);
    const t = Date.now();
    const good = { sid: A, prefix: "p-bad-batch", received_at: t };
    for (const body of [
      JSON.stringify([good, { sid: "not-a-sid", received_at: t }]),
      JSON.stringify([good, { sid: A, received_at: t, secret: "x" }]),
      JSON.stringify({ sid: A, received_at: t }),
      "[{",
    ]) {
      const res = await post(inst, "webhook/ext", body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { ok: boolean }).ok).toBe(false);
    }
    // Then a good batch: the frame that follows holds only it.
    const frame = person.next((f) => f.topic === "llm_requests" && requestsOf(f).length > 0);
    expect((await post(inst, "webhook/ext", JSON.stringify([good]))).status).toBe(204);
    expect(requestsOf(await frame).map((r) => r.prefix)).toEqual(["p-bad-batch"]);
    await person.request("topic_unsubscribe", { topic: "llm_requests" });
  });

  it("keeps the newest request per (sid, prefix), decides main by the rule, and expires windows", async () => {
    // A clean table first: every earlier window ends. The events are stamped
    // by the instance's clock, whatever it reads after the move.
    const base = await inst.advanceClock(2 * LLM_PROMPT_CACHE_TTL_MS);
    const events = [
      // A's own conversation starts first; its sub-agent's prefix is also B's.
      { sid: A, prefix: "own-a", received_at: base, cache_ttl_secs: 300 },
      { sid: A, prefix: "shared", received_at: base + 10, cache_ttl_secs: 300 },
      { sid: A, prefix: "own-a", received_at: base + 20, cache_ttl_secs: 300, model: "m2" },
      // B has only shared series: the newest is marked.
      { sid: B, prefix: "shared", received_at: base + 5, cache_ttl_secs: 300 },
      { sid: B, prefix: "also-shared", received_at: base + 30, cache_ttl_secs: 3600 },
      { sid: A, prefix: "also-shared", received_at: base + 1, cache_ttl_secs: 300 },
      // A failed request refreshes nothing.
      { sid: A, prefix: "own-a", received_at: base + 40, status: 529, error: "overloaded_error" },
    ];
    const snap = await person.subscribe("llm_requests");
    expect(requestsOf(snap)).toEqual([]);
    const full = person.next((f) => f.topic === "llm_requests" && requestsOf(f).length === 5);
    expect((await post(inst, "webhook/ext", JSON.stringify(events))).status).toBe(204);
    const rows = requestsOf(await full);
    const row = (sid: string, prefix: string) =>
      rows.find((r) => r.sid === sid && r.prefix === prefix)!;
    expect(row(A, "own-a")).toMatchObject({
      received_at: base + 20,
      model: "m2",
      main: true,
      instance: inst.id,
      cache_expires_at: base + 20 + 300_000,
    });
    expect(row(A, "own-a").status).toBeUndefined();
    expect(row(A, "shared").main).toBe(false);
    expect(row(A, "also-shared").main).toBe(false);
    expect(row(B, "shared").main).toBe(false);
    expect(row(B, "also-shared").main).toBe(true);

    // Busy-ness: the latest event of each session, the failed one included.
    const peers = await person.subscribe("peers");
    const rowOf = (sid: string) =>
      (peers.data as { peers: PeerInfo[] }).peers.find((p) => p.sid === sid);
    expect(rowOf(A)?.gateway_active_at).toBe(base + 40);
    expect(rowOf(B)?.gateway_active_at).toBe(base + 30);

    // Five-minute windows end; B's one-hour window is left, and with every
    // remaining series of B shared no more, it is B's own.
    const left = person.next((f) => f.topic === "llm_requests" && requestsOf(f).length === 1);
    await inst.advanceClock(2 * LLM_PROMPT_CACHE_TTL_MS + 60_000);
    expect(requestsOf(await left)).toEqual([
      expect.objectContaining({ sid: B, prefix: "also-shared", main: true }),
    ]);
    const none = person.next((f) => f.topic === "llm_requests" && requestsOf(f).length === 0);
    await inst.advanceClock(3_600_000);
    await none;
  });
});
