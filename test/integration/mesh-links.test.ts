import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixture, OP_FIXTURES } from "../../src/contract/fixtures/index.js";
import { OP_ATTRIBUTES, OP_NAMES, type Role } from "../../src/contract/index.js";
import { ownerHeaders } from "../helpers/http.js";
import { runCli } from "../helpers/instance.js";
import { startMesh, type TestMesh } from "../helpers/mesh.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Three real instances linked through cuttable TCP proxies (helpers/mesh.ts),
// exercising the links and the MeshPort through the test-hook routes.

async function hook<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(new URL(path, base), {
    method,
    headers: {
      ...ownerHeaders(base),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await fn();
    if (got !== undefined) return got;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

type InstanceRow = { id?: string; endpoint?: string; reachable: boolean };

describe("mesh links", () => {
  let mesh: TestMesh;
  let ids: string[];
  beforeAll(async () => {
    mesh = await startMesh(3);
    ids = mesh.instances.map((i) => i.id);
    await mesh.waitLinked();
  }, 30_000);
  afterAll(async () => {
    await mesh?.stop();
  });

  /** A `peers` subscriber on instance i, keeping the latest instance list. */
  async function watchPeers(i: number) {
    const peer = await Peer.unix(mesh.instances[i]!.socket);
    await peer.request("hello", { role: "user", protocol_version: 3 });
    let latest: InstanceRow[] = [];
    const seen: { at: number; instances: InstanceRow[] }[] = [];
    peer.client.onPushed((p) => {
      const f = p as { topic?: string; data?: { instances?: InstanceRow[] } };
      if (f.topic === "peers" && f.data?.instances) {
        latest = f.data.instances;
        seen.push({ at: Date.now(), instances: latest });
      }
    });
    await peer.request("topic_subscribe", { topic: "peers" });
    return {
      reachable: (id: string) => latest.find((x) => x.id === id)?.reachable,
      seen,
      close: () => peer.client.close(),
    };
  }

  it("three instances link up: mesh list and hello.instances show all three by id", async () => {
    for (let i = 0; i < 3; i++) {
      const list = await mesh.list(i);
      expect(list.self).toMatchObject({ id: ids[i], endpoint: mesh.endpoints[i] });
      const others = [0, 1, 2].filter((j) => j !== i);
      expect(list.peers.map((p) => [p.endpoint, p.id, p.reachable]).sort()).toEqual(
        others.map((j) => [mesh.endpoints[j], ids[j], true]).sort(),
      );
    }
    const peer = await Peer.unix(mesh.instances[0]!.socket);
    const reply = await peer.request("hello", { role: "user", protocol_version: 3 });
    const hello = reply as unknown as { endpoint: string; instances: InstanceRow[] };
    expect(hello.endpoint).toBe(mesh.endpoints[0]);
    expect(hello.instances[0]?.id).toBe(ids[0]);
    expect(hello.instances.map((x) => [x.id, x.endpoint, x.reachable]).sort()).toEqual(
      ids.map((id, j) => [id, mesh.endpoints[j], true]).sort(),
    );
    peer.client.close();
    const cli = await runCli(["mesh", "list", "--json"], mesh.env(1));
    expect(cli.code).toBe(0);
    const listed = JSON.parse(cli.stdout) as { peers: { id: string; reachable: boolean }[] };
    expect(
      listed.peers
        .filter((p) => p.reachable)
        .map((p) => p.id)
        .sort(),
    ).toEqual([ids[0], ids[2]].sort());
    const text = await runCli(["mesh", "list", "--text"], mesh.env(1));
    expect(text.stdout).toContain(`${mesh.endpoints[0]}  ${ids[0]}`);
    expect(text.stdout).toContain("reachable, linked since");
  });

  it("one link per pair, seen alike from both ends (glare: the lower endpoint's dial kept)", async () => {
    // The losers close at once; C2 key fetches close after their answer.
    await until("one connection per pair", async () => {
      for (let i = 0; i < 3; i++)
        for (let j = i + 1; j < 3; j++)
          if (mesh.connections(i, j) + mesh.connections(j, i) !== 1) return undefined;
      return true;
    });
    const lists = await Promise.all([0, 1, 2].map((i) => mesh.list(i)));
    for (let i = 0; i < 3; i++) {
      for (const p of lists[i]!.peers) {
        const j = mesh.endpoints.indexOf(p.endpoint);
        const mirror = lists[j]!.peers.find((q) => q.endpoint === mesh.endpoints[i]);
        expect(mirror?.direction).toBe(p.direction === "out" ? "in" : "out");
        // The socket of the kept link runs through the dialer's proxy.
        const [dialer, other] = p.direction === "out" ? [i, j] : [j, i];
        expect(mesh.connections(dialer, other)).toBe(1);
        // Where both dials were verified, the lower endpoint's was kept —
        // unless a link of the pair went down since for another reason (a
        // heartbeat missed under load): the link now is a later dial's.
        const log = mesh.instances[i]!.log().filter((l) => l.endpoint === p.endpoint);
        const glared = log.some((l) => l.msg === "mesh link up" && l.glare === true);
        const lost = log.some(
          (l) => l.msg === "mesh link down" && l.why !== "duplicate link (glare)",
        );
        if (glared && !lost) expect(mesh.endpoints[dialer]! < mesh.endpoints[other]!).toBe(true);
      }
    }
  });

  it("request: an op runs at the peer as the caller given, re-authorized there", async () => {
    const base = mesh.instances[0]!.http;
    const ping = await hook<{ ok: boolean; reply: { ok: boolean; result: { instance: string } } }>(
      base,
      "POST",
      "_test/mesh/request",
      { to: ids[1], frame: { op: "instance_ping" } },
    );
    expect(ping.reply).toMatchObject({ ok: true, result: { instance: ids[1] } });
    const asUser = await hook<{ reply: { ok: boolean; result: { presets: unknown[] } } }>(
      base,
      "POST",
      "_test/mesh/request",
      { to: ids[2], frame: { op: "dump_presets_read", caller: { role: "user" } } },
    );
    expect(asUser.reply.ok).toBe(true);
    expect(Array.isArray(asUser.reply.result.presets)).toBe(true);
    // Without a caller it is the instance itself, which that op's row excludes.
    const asInstance = await hook<{ reply: { ok: boolean; error: { code: string } } }>(
      base,
      "POST",
      "_test/mesh/request",
      { to: ids[2], frame: { op: "dump_presets_read" } },
    );
    expect(asInstance.reply).toMatchObject({ ok: false, error: { code: "forbidden" } });
    // A caller that is not a Caller is refused at stage 2, never believed.
    const badCaller = await hook<{ reply: { ok: boolean; error: { code: string } } }>(
      base,
      "POST",
      "_test/mesh/request",
      { to: ids[2], frame: { op: "dump_presets_read", caller: { role: "session" } } },
    );
    expect(badCaller.reply).toMatchObject({ ok: false, error: { code: "invalid_args" } });
  });

  it("scenario 18 over an authenticated link: every op is authorized as the link's caller, the instance when none is named", async () => {
    const base = mesh.instances[0]!.http;
    const sid = newSid();
    const offenders: string[] = [];
    for (const op of OP_NAMES) {
      // A second hello on the settled link is bad_request by rule, not a role question.
      if (op === "hello") continue;
      const { op: _o, request_id: _r, to_instance: _t, ...args } = fixture(OP_FIXTURES[op].request);
      const roles = OP_ATTRIBUTES[op].roles as readonly Role[];
      for (const caller of [undefined, { role: "session", sid }, { role: "user" }] as const) {
        const role: Role = caller?.role ?? "instance";
        // Allowed, it would stop the instance under test.
        if (op === "instance_shutdown" && roles.includes(role)) continue;
        const frame = caller === undefined ? { op, ...args } : { op, ...args, caller };
        const sent = await hook<{ reply?: { ok: boolean; error?: { code: string; msg: string } } }>(
          base,
          "POST",
          "_test/mesh/request",
          { to: ids[1], frame, timeout_ms: 3000 },
        );
        // Every request must reach the other instance and be answered there.
        const reply = sent.reply;
        // The table's own refusal (stage 4) exactly when the row excludes the
        // caller's role — told apart from a handler's (a session reading
        // another's transcript is forbidden there too).
        const msg = reply?.error?.msg ?? "";
        const wrong = roles.includes(role)
          ? msg.startsWith(`${op} is not open to role`)
          : msg !== `${op} is not open to role ${role}`;
        if (reply === undefined || wrong)
          offenders.push(`${op} as ${role}: ${JSON.stringify(sent)}`);
      }
    }
    expect(offenders).toEqual([]);
  });

  it("request: a loop (hops naming the receiver) is dropped without a reply", async () => {
    const base = mesh.instances[0]!.http;
    const t0 = Date.now();
    const looped = await hook<{ ok: boolean; error: { code: string; msg: string } }>(
      base,
      "POST",
      "_test/mesh/request",
      { to: ids[1], frame: { op: "instance_ping", hops: [ids[0], ids[1]] }, timeout_ms: 600 },
    );
    expect(looped).toMatchObject({ ok: false, error: { code: "instance_unreachable" } });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(550);
    const logged = mesh.instances[1]!.log().some((l) => String(l.msg).includes("looped back"));
    expect(logged).toBe(true);
    // An unknown instance: no link at all.
    const none = await hook<{ ok: boolean; error: { code: string } }>(
      base,
      "POST",
      "_test/mesh/request",
      {
        to: "f".repeat(32),
        frame: { op: "instance_ping" },
      },
    );
    expect(none).toMatchObject({ ok: false, error: { code: "instance_unreachable" } });
  });

  it("relay: a topic held on every linked peer, frames passed on with their instance", async () => {
    const base = mesh.instances[0]!.http;
    const { relay } = await hook<{ relay: number }>(base, "POST", "_test/mesh/relay", {
      topic: "peers",
      caller: { role: "user" },
    });
    type Got = { peer: string; frame: { topic: string; instance: string; snapshot?: boolean } }[];
    const frames = await until("snapshots from both peers", async () => {
      const got = (await hook<{ frames: Got }>(base, "GET", `_test/mesh/relay/${relay}`)).frames;
      const snaps = got.filter((f) => f.frame.snapshot === true);
      return new Set(snaps.map((f) => f.peer)).size === 2 ? got : undefined;
    });
    for (const f of frames) {
      expect(f.frame.topic).toBe("peers");
      expect(f.frame.instance).toBe(f.peer);
    }
    expect(new Set(frames.map((f) => f.peer))).toEqual(new Set([ids[1], ids[2]]));
    await hook(base, "DELETE", `_test/mesh/relay/${relay}`);
  });

  it("send/onFrame: an instance-rule frame reaches the peer's handler; false without a link", async () => {
    const sent = await hook<{ sent: boolean }>(mesh.instances[0]!.http, "POST", "_test/mesh/send", {
      to: ids[1],
      frame: { mesh: "test", n: 7 },
    });
    expect(sent.sent).toBe(true);
    const got = await until("the frame at instance 1", async () => {
      const ev = await hook<{ frames: { from: string; frame: { n: number } }[] }>(
        mesh.instances[1]!.http,
        "GET",
        "_test/mesh/events",
      );
      return ev.frames.find((f) => f.frame.n === 7);
    });
    expect(got.from).toBe(ids[0]);
    const unsent = await hook<{ sent: boolean }>(
      mesh.instances[0]!.http,
      "POST",
      "_test/mesh/send",
      {
        to: "e".repeat(32),
        frame: { mesh: "test", n: 8 },
      },
    );
    expect(unsent.sent).toBe(false);
  });

  for (const mode of ["reset", "blackhole"] as const) {
    it(`a cut link (${mode}) shows reachable:false in a peers subscriber within 2 s; heal relinks`, async () => {
      const watch = await watchPeers(0);
      await until("2 reachable in the snapshot", async () => watch.reachable(ids[2]!) || undefined);
      const t0 = Date.now();
      mesh.cut(0, 2, mode);
      mesh.cut(2, 0, mode);
      await until(
        "2 unreachable",
        async () => (watch.reachable(ids[2]!) === false ? true : undefined),
        5000,
      );
      const ms = Date.now() - t0;
      expect(ms).toBeLessThan(2000);
      // The other link is untouched.
      expect(watch.reachable(ids[1]!)).toBe(true);
      const events = await hook<{ links: { peer: string; up: boolean }[] }>(
        mesh.instances[0]!.http,
        "GET",
        "_test/mesh/events",
      );
      expect(events.links.at(-1)).toMatchObject({ peer: ids[2], up: false });
      const list = await mesh.list(0);
      expect(list.peers.find((p) => p.id === ids[2])).toMatchObject({ reachable: false });
      mesh.heal();
      await until("2 reachable again", async () => watch.reachable(ids[2]!) || undefined, 10_000);
      await mesh.waitLinked();
      watch.close();
    });
  }

  it("a restarted instance is linked again (it dials in; the others redial with backoff)", async () => {
    const before = (await mesh.list(0)).peers.find((p) => p.id === ids[1])!.linked_since!;
    await mesh.restart(1);
    expect(mesh.instances[1]!.id).toBe(ids[1]);
    await mesh.waitLinked(15_000);
    const after = (await mesh.list(0)).peers.find((p) => p.id === ids[1])!;
    expect(after.linked_since!).toBeGreaterThan(before);
  });

  it("mesh remove closes the link and it stays closed", async () => {
    const removed = await runCli(["mesh", "remove", ids[2]!, "--json"], mesh.env(0));
    expect(removed.code).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({ endpoint: mesh.endpoints[2], id: ids[2] });
    const list0 = await mesh.list(0);
    expect(list0.peers.map((p) => p.endpoint)).toEqual([mesh.endpoints[1]]);
    await until("2 sees 0 unreachable", async () => {
      const l = await mesh.list(2);
      return l.peers.find((p) => p.endpoint === mesh.endpoints[0])?.reachable === false
        ? l
        : undefined;
    });
    // 2 keeps dialing 0 (it still lists it) and is refused each time.
    await new Promise((r) => setTimeout(r, 1500));
    const l2 = await mesh.list(2);
    const row = l2.peers.find((p) => p.endpoint === mesh.endpoints[0])!;
    expect(row.reachable).toBe(false);
    expect(row.last_error).toContain("iss is not in this instance's endpoints list");
    expect((await mesh.list(0)).peers.length).toBe(1);
    const again = await runCli(["mesh", "remove", ids[2]!], mesh.env(0));
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain("not_found");
    expect(contractViolations).toEqual([]);
  });
});
