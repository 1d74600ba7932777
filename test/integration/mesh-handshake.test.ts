import {
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  randomBytes,
  sign,
  verify,
} from "node:crypto";
import { createServer, request, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type WebSocket, WebSocketServer, WebSocket as WsClient } from "ws";
import { adminFrame, startMesh, type TestMesh } from "../helpers/mesh.js";
import { freePort } from "../helpers/ports.js";

// The §8.1 handshake against a real instance R, by a dialer written here from
// the wire format alone (not the instance's own code): a fake peer with its
// own HTTP listener serving the one-off key, and a WebSocket to R. Every
// failure of §8.1's list closes the connection (code 4001) and leaves R
// serving its real peer.

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

function compactJws(header: object, payload: object, key: KeyObject): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${sign(null, Buffer.from(input), key).toString("base64url")}`;
}

interface Socket {
  ws: WebSocket;
  frames: Record<string, unknown>[];
  send(frame: unknown): void;
  next(): Promise<Record<string, unknown>>;
  closed: Promise<{ code: number; reason: string }>;
}

function wrap(ws: WebSocket): Socket {
  const frames: Record<string, unknown>[] = [];
  let taken = 0;
  const waiting: ((f: Record<string, unknown>) => void)[] = [];
  ws.on("message", (data: Buffer) => {
    for (const line of data.toString().split("\n")) {
      if (line.trim() === "") continue;
      frames.push(JSON.parse(line) as Record<string, unknown>);
      const w = waiting.shift();
      if (w !== undefined) w(frames[taken++]!);
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return {
    ws,
    frames,
    send: (frame) => ws.send(`${typeof frame === "string" ? frame : JSON.stringify(frame)}\n`),
    next: () =>
      new Promise((resolve, reject) => {
        if (taken < frames.length) return resolve(frames[taken++]!);
        waiting.push(resolve);
        void closed.then(() => reject(new Error("closed")));
      }),
    closed,
  };
}

/** A fake peer: an HTTP listener serving `mesh/jwk/<kid>` for its keys, and
 * accepting (then closing) the dials R makes to it. */
class FakePeer {
  readonly keys = new Map<string, { jwk: object; privateKey: KeyObject }>();
  readonly keyRequests: { kid: string; challenge: string; status: number }[] = [];
  private keyWaiters: ((r: { kid: string; challenge: string }) => void)[] = [];
  /** What R's own dials to this endpoint meet (default: closed at once). */
  onDialIn: (socket: Socket, hello: Record<string, unknown>) => void = (s) => s.ws.close(1000);
  /** Replaces the key answer (the replay test hands out a public key again). */
  answerKey: ((kid: string) => object | undefined) | undefined;
  readonly id = randomBytes(16).toString("hex");

  private constructor(
    readonly server: Server,
    readonly endpoint: string,
  ) {}

  static async start(): Promise<FakePeer> {
    const port = await freePort();
    const server = createServer();
    const peer = new FakePeer(server, `http://127.0.0.1:${port}/`);
    server.on("request", (req, res) => {
      const m = /^\/mesh\/jwk\/([^/]+)$/.exec(req.url ?? "");
      let body = "";
      req.on("data", (c: Buffer) => {
        body += c.toString();
      });
      req.on("end", () => {
        const kid = m?.[1] ?? "";
        const challenge = String(
          (JSON.parse(body || "{}") as { challenge?: unknown }).challenge ?? "",
        );
        const jwk = peer.answerKey?.(kid) ?? peer.keys.get(kid)?.jwk;
        const status = req.method === "POST" && jwk !== undefined ? 200 : 404;
        peer.keyRequests.push({ kid, challenge, status });
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(status === 200 ? jwk : { error: "no such key" }));
        peer.keyWaiters.shift()?.({ kid, challenge });
      });
    });
    const wss = new WebSocketServer({
      server,
      handleProtocols: (p) => (p.has("ccmsg.mesh") ? "ccmsg.mesh" : false),
    });
    wss.on("connection", (ws) => {
      const s = wrap(ws);
      void s.next().then(
        (hello) => peer.onDialIn(s, hello),
        () => {},
      );
    });
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    return peer;
  }

  newKey(): { kid: string; privateKey: KeyObject; jwk: object } {
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    const kid = randomBytes(16).toString("base64url");
    const jwk = { ...publicKey.export({ format: "jwk" }), kid, alg: "EdDSA" };
    this.keys.set(kid, { jwk, privateKey });
    return { kid, privateKey, jwk };
  }

  nextKeyRequest(): Promise<{ kid: string; challenge: string }> {
    return new Promise((resolve) => this.keyWaiters.push(resolve));
  }

  async dial(target: string, protocol = "ccmsg.mesh"): Promise<Socket> {
    const ws = new WsClient(`${target}ws`, [protocol]);
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    return wrap(ws);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe("mesh handshake (§8.1) against a hand-rolled dialer", () => {
  let mesh: TestMesh;
  let fake: FakePeer;
  let stranger: FakePeer;
  let R: string;
  let rSocket: string;
  beforeAll(async () => {
    mesh = await startMesh(2);
    await mesh.waitLinked();
    R = mesh.endpoints[0]!;
    rSocket = mesh.instances[0]!.socket;
    fake = await FakePeer.start();
    stranger = await FakePeer.start();
    await adminFrame(rSocket, "admin_mesh_add", { endpoint: fake.endpoint });
  }, 30_000);
  afterAll(async () => {
    await mesh?.stop();
    await fake?.close();
    await stranger?.close();
  });

  const hello = (kid: string, mesh: Record<string, unknown> = {}, from = fake) => ({
    op: "hello",
    request_id: "h1",
    role: "instance",
    protocol_version: 3,
    mesh: { ver: 1, iss: from.endpoint, aud: R, id: from.id, kid, ...mesh },
  });
  const claims = (challenge: string, over: Record<string, unknown> = {}) => ({
    ver: 1,
    iss: fake.endpoint,
    aud: R,
    challenge,
    exp: Math.floor(Date.now() / 1000) + 10,
    ...over,
  });

  /** The real peer stays linked and R answers: nothing a refusal did spread. */
  async function rStillServes(): Promise<void> {
    const list = await mesh.list(0);
    expect(list.peers.find((p) => p.endpoint === mesh.endpoints[1])?.reachable).toBe(true);
  }

  /** Greet, answer the key fetch, then send the proof `proofOf(challenge)` makes. */
  async function attempt(
    proofOf: (challenge: string, key: ReturnType<FakePeer["newKey"]>) => unknown,
    greeting: (kid: string) => object = (kid) => hello(kid),
  ) {
    const key = fake.newKey();
    const s = await fake.dial(R);
    const fetched = fake.nextKeyRequest();
    s.send(greeting(key.kid));
    const { challenge } = await fetched;
    const proof = proofOf(challenge, key);
    s.send({ mesh: "proof", jws: proof });
    return { s, key, challenge, proof };
  }

  async function expectRefused(s: Socket, containing?: string): Promise<void> {
    const { code } = await s.closed;
    expect(code).toBe(4001);
    expect(s.frames.some((f) => f.ok === true)).toBe(false);
    if (containing !== undefined) {
      const failure = s.frames.find((f) => f.ok === false) as
        | { error?: { msg?: string } }
        | undefined;
      expect(failure?.error?.msg ?? "").toContain(containing);
    }
    await rStillServes();
  }

  it("a valid greeting and proof: the hello reply is the ack, and the link works", async () => {
    const { s, challenge } = await attempt((c, k) =>
      compactJws({ alg: "EdDSA", kid: k.kid }, claims(c), k.privateKey),
    );
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    const ack = await s.next();
    expect(ack).toMatchObject({
      ok: true,
      request_id: "h1",
      instance: mesh.instances[0]!.id,
      endpoint: R,
    });
    expect(ack).not.toHaveProperty("auth_expires_at");
    // The key was fetched once, by R, with the challenge it then checked.
    expect(fake.keyRequests.at(-1)).toMatchObject({ challenge, status: 200 });
    const list = await mesh.list(0);
    expect(list.peers.find((p) => p.endpoint === fake.endpoint)).toMatchObject({
      id: fake.id,
      reachable: true,
      direction: "in",
    });
    // A request over the link runs at R as the instance.
    s.send({ op: "instance_ping", request_id: "p1" });
    let reply = await s.next();
    // After the ack R tells its host ({"mesh":"about"}); the reply follows.
    while (reply.request_id !== "p1") reply = await s.next();
    expect(reply).toMatchObject({ ok: true, instance: mesh.instances[0]!.id });
    expect(s.frames).toContainEqual({ mesh: "about", host: expect.any(String) });
    s.ws.close();
    await s.closed;
  });

  it("a recorded valid greeting and proof replayed on a new connection is refused", async () => {
    const first = await attempt((c, k) =>
      compactJws({ alg: "EdDSA", kid: k.kid }, claims(c), k.privateKey),
    );
    const helloLine = JSON.stringify(hello(first.key.kid));
    expect((await first.s.next()).ok).toBe(true);
    first.s.ws.close();
    await first.s.closed;
    // The attacker replays both frames; even the public key is handed out
    // again, so only the fresh challenge stops it.
    fake.answerKey = (kid) => (kid === first.key.kid ? first.key.jwk : undefined);
    try {
      const s = await fake.dial(R);
      const fetched = fake.nextKeyRequest();
      s.send(helloLine);
      const { challenge } = await fetched;
      expect(challenge).not.toBe(first.challenge);
      s.send({ mesh: "proof", jws: first.proof });
      await expectRefused(s, "another challenge");
    } finally {
      fake.answerKey = undefined;
    }
  });

  const refusedProofs: [
    string,
    (c: string, k: ReturnType<FakePeer["newKey"]>) => unknown,
    string,
  ][] = [
    [
      "an expired proof",
      (c, k) =>
        compactJws(
          { alg: "EdDSA", kid: k.kid },
          claims(c, { exp: Math.floor(Date.now() / 1000) - 1 }),
          k.privateKey,
        ),
      "expired",
    ],
    [
      "a wrong signature",
      (c, k) =>
        compactJws(
          { alg: "EdDSA", kid: k.kid },
          claims(c),
          generateKeyPairSync("ed25519").privateKey,
        ),
      "signature",
    ],
    ["alg none", (c, k) => `${b64({ alg: "none", kid: k.kid })}.${b64(claims(c))}.`, "not allowed"],
    [
      "alg HS256",
      (c, k) => compactJws({ alg: "HS256", kid: k.kid }, claims(c), k.privateKey),
      "not allowed",
    ],
    [
      "a key carried in the header",
      (c, k) => compactJws({ alg: "EdDSA", kid: k.kid, jwk: k.jwk }, claims(c), k.privateKey),
      "may not carry jwk",
    ],
    [
      "a kid other than the greeting's",
      (c, k) => compactJws({ alg: "EdDSA", kid: `${k.kid}x` }, claims(c), k.privateKey),
      "kid",
    ],
    [
      "a proof for another aud",
      (c, k) =>
        compactJws(
          { alg: "EdDSA", kid: k.kid },
          claims(c, { aud: mesh.endpoints[1] }),
          k.privateKey,
        ),
      "aud",
    ],
    [
      "a proof for another iss",
      (c, k) =>
        compactJws(
          { alg: "EdDSA", kid: k.kid },
          claims(c, { iss: stranger.endpoint }),
          k.privateKey,
        ),
      "iss",
    ],
    [
      "a proof of another ver",
      (c, k) => compactJws({ alg: "EdDSA", kid: k.kid }, claims(c, { ver: 2 }), k.privateKey),
      "ver",
    ],
    [
      "a proof answering another challenge",
      (_c, k) =>
        compactJws(
          { alg: "EdDSA", kid: k.kid },
          claims(randomBytes(32).toString("base64url")),
          k.privateKey,
        ),
      "another challenge",
    ],
    ["no JWS at all", () => "not.a-jws", "compact JWS"],
    ["a proof that is not a string", () => 42, "compact JWS"],
  ];
  for (const [name, proofOf, why] of refusedProofs)
    it(`refuses ${name}`, async () => {
      const { s } = await attempt(proofOf);
      await expectRefused(s, why);
    });

  const refusedGreetings: [string, (kid: string) => object, string][] = [
    ["an unknown mesh ver", (kid) => hello(kid, { ver: 2 }), "ver 2"],
    ["an iss not in the list", (kid) => hello(kid, {}, stranger), "iss is not in"],
    ["an aud naming another instance", (kid) => hello(kid, { aud: mesh.endpoints[1] }), "aud"],
    ["an aud that merely starts with R's endpoint", (kid) => hello(kid, { aud: `${R}ws/` }), "aud"],
    [
      "an aud naming R by another host name",
      (kid) => hello(kid, { aud: R.replace("127.0.0.1", "localhost") }),
      "aud",
    ],
    [
      "a partial aud (no trailing slash)",
      (kid) => hello(kid, { aud: R.slice(0, -1) }),
      "/mesh/aud",
    ],
    [
      "an id already bound to another endpoint",
      (kid) => hello(kid, { id: mesh.instances[1]!.id }),
      "already bound",
    ],
    ["R's own id", (kid) => hello(kid, { id: mesh.instances[0]!.id }), "own"],
    ["another wire generation", (kid) => ({ ...hello(kid), protocol_version: 2 }), "generation 2"],
    ["a sid beside the mesh claim", (kid) => ({ ...hello(kid), sid: crypto.randomUUID() }), "/sid"],
  ];
  for (const [name, greeting, why] of refusedGreetings)
    it(`refuses a greeting with ${name}, before fetching any key`, async () => {
      const key = fake.newKey();
      const before = fake.keyRequests.length;
      const s = await fake.dial(R);
      s.send(greeting(key.kid));
      await expectRefused(s, why);
      expect(fake.keyRequests.length).toBe(before);
    });

  it("one id, one link: the standing binding stays with the real peer", async () => {
    const list = await mesh.list(0);
    expect(list.peers.find((p) => p.endpoint === mesh.endpoints[1])).toMatchObject({
      id: mesh.instances[1]!.id,
      reachable: true,
    });
    expect(list.peers.find((p) => p.endpoint === fake.endpoint)?.id).toBe(fake.id);
  });

  it("refuses a frame before the greeting, and frames between greeting and ack", async () => {
    const early = await fake.dial(R);
    early.send({ op: "instance_ping", request_id: "x" });
    await expectRefused(early);
    // After the greeting, anything but the proof — a request, or asking for
    // the key on the main connection — closes it.
    for (const frame of [
      { op: "instance_ping", request_id: "x" },
      { mesh: "jwk", kid: "k" },
      { mesh: "proof", jws: "a.b.c", extra: true },
    ]) {
      const key = fake.newKey();
      const s = await fake.dial(R);
      const fetched = fake.nextKeyRequest();
      s.send(hello(key.kid));
      await fetched;
      s.send(frame);
      await expectRefused(s);
    }
  });

  it("refuses when the key cannot be fetched (unknown kid at iss)", async () => {
    const s = await fake.dial(R);
    s.send(hello(randomBytes(16).toString("base64url")));
    await expectRefused(s, "key could not be fetched");
    expect(fake.keyRequests.at(-1)?.status).toBe(404);
  });

  it("a mesh socket that never greets is cut after the handshake's time", async () => {
    const s = await fake.dial(R);
    const t0 = Date.now();
    expect((await s.closed).code).toBe(4001);
    // The helper's dead time (1 s) bounds a handshake in tests.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900);
    expect(Date.now() - t0).toBeLessThan(5000);
    await rStillServes();
  });

  it("a mesh socket opened from a browser page (with an Origin) is refused", async () => {
    const ws = new WsClient(`${R}ws`, ["ccmsg.mesh"], { headers: { origin: R.slice(0, -1) } });
    const status = await new Promise<number>((resolve) => {
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => resolve(101));
      ws.on("error", () => {});
    });
    expect(status).toBe(403);
  });
});

describe("the key route (C2) on a real instance", () => {
  let mesh: TestMesh;
  let fake: FakePeer;
  beforeAll(async () => {
    mesh = await startMesh(1, { backoffMs: 100 });
    fake = await FakePeer.start();
  }, 30_000);
  afterAll(async () => {
    await mesh?.stop();
    await fake?.close();
  });

  const post = (path: string, body: object, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(path, mesh.endpoints[0]);
      const text = JSON.stringify(body);
      const req = request(
        url,
        {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          agent: false,
        },
        (res) => {
          let b = "";
          res.on("data", (c: Buffer) => {
            b += c.toString();
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: b }));
        },
      );
      req.on("error", reject);
      req.end(text);
    });
  const challenge = () => randomBytes(32).toString("base64url");

  it("R as dialer: serves its key once, proves with it, and takes the hello reply as the ack", async () => {
    const dialed = new Promise<{ s: Socket; hello: Record<string, unknown> }>((resolve) => {
      fake.onDialIn = (s, hello) => resolve({ s, hello });
    });
    await adminFrame(mesh.instances[0]!.socket, "admin_mesh_add", {
      endpoint: fake.endpoint,
      id: fake.id,
    });
    const { s, hello } = await dialed;
    fake.onDialIn = (x) => x.ws.close(1000);
    const claim = hello.mesh as { ver: number; iss: string; aud: string; id: string; kid: string };
    expect(hello).toMatchObject({ op: "hello", role: "instance", protocol_version: 3 });
    expect(claim).toMatchObject({
      ver: 1,
      iss: mesh.endpoints[0],
      aud: fake.endpoint,
      id: mesh.instances[0]!.id,
    });
    expect(claim.kid.length).toBeGreaterThanOrEqual(22);
    const c = challenge();
    const key = await post(`mesh/jwk/${claim.kid}`, { challenge: c });
    expect(key.status).toBe(200);
    const jwk = JSON.parse(key.body) as { kty: string; crv: string; x: string; d?: string };
    expect(jwk).toMatchObject({ kty: "OKP", crv: "Ed25519" });
    expect(jwk.d).toBeUndefined();
    // Used: a second fetch finds nothing.
    expect((await post(`mesh/jwk/${claim.kid}`, { challenge: challenge() })).status).toBe(404);
    const proofFrame = await s.next();
    expect(Object.keys(proofFrame).sort()).toEqual(["jws", "mesh"]);
    const [h, p, sig] = String(proofFrame.jws).split(".") as [string, string, string];
    expect(JSON.parse(Buffer.from(h, "base64url").toString())).toMatchObject({
      alg: "EdDSA",
      kid: claim.kid,
    });
    const payload = JSON.parse(Buffer.from(p, "base64url").toString()) as Record<
      string,
      number | string
    >;
    expect(payload).toMatchObject({
      ver: 1,
      iss: mesh.endpoints[0],
      aud: fake.endpoint,
      challenge: c,
    });
    const exp = Number(payload.exp) * 1000;
    expect(exp).toBeGreaterThan(Date.now());
    expect(exp).toBeLessThan(Date.now() + 15_000);
    const pub = createPublicKey({ key: jwk, format: "jwk" });
    expect(verify(null, Buffer.from(`${h}.${p}`), pub, Buffer.from(sig, "base64url"))).toBe(true);
    // The ack: R's link is up, bound to the id the reply names.
    s.send({
      ok: true,
      request_id: String(hello.request_id),
      protocol_version: 3,
      instance: fake.id,
      instances: [{ id: fake.id, host: "fakehost", reachable: true }],
      capabilities: [],
      version: "t",
      started_at: 0,
    });
    const deadline = Date.now() + 5000;
    let row: Awaited<ReturnType<TestMesh["list"]>>["peers"][number] | undefined;
    while (Date.now() < deadline) {
      row = (await mesh.list(0)).peers.find((x) => x.endpoint === fake.endpoint);
      if (row?.reachable) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(row).toMatchObject({ id: fake.id, reachable: true, direction: "out", host: "fakehost" });
    // Glare: the fake now dials in too and proves itself. Both links are
    // verified at R, which keeps the one dialed by the lower endpoint and
    // closes the other with 4000.
    const key2 = fake.newKey();
    const inbound = await fake.dial(mesh.endpoints[0]!);
    const fetched = fake.nextKeyRequest();
    inbound.send({
      op: "hello",
      request_id: "h2",
      role: "instance",
      protocol_version: 3,
      mesh: { ver: 1, iss: fake.endpoint, aud: mesh.endpoints[0], id: fake.id, kid: key2.kid },
    });
    const { challenge: c2 } = await fetched;
    const claims2 = { ver: 1, iss: fake.endpoint, aud: mesh.endpoints[0], challenge: c2 };
    const exp2 = Math.floor(Date.now() / 1000) + 10;
    const header = Buffer.from(JSON.stringify({ alg: "EdDSA", kid: key2.kid })).toString(
      "base64url",
    );
    const body = Buffer.from(JSON.stringify({ ...claims2, exp: exp2 })).toString("base64url");
    const signature = sign(null, Buffer.from(`${header}.${body}`), key2.privateKey).toString(
      "base64url",
    );
    inbound.send({ mesh: "proof", jws: `${header}.${body}.${signature}` });
    expect(await inbound.next()).toMatchObject({ ok: true, request_id: "h2" });
    const rDialedKept = mesh.endpoints[0]! < fake.endpoint;
    const [loser, winner] = rDialedKept ? [inbound, s] : [s, inbound];
    expect((await loser.closed).code).toBe(4000);
    const kept = (await mesh.list(0)).peers.find((x) => x.endpoint === fake.endpoint);
    expect(kept).toMatchObject({ reachable: true, direction: rDialedKept ? "out" : "in" });
    expect(winner.ws.readyState).toBe(winner.ws.OPEN);
    winner.ws.close();
    await adminFrame(mesh.instances[0]!.socket, "admin_mesh_remove", { peer: fake.endpoint });
  });

  it("an unknown kid is 404; an Origin is 403; a foreign Host is 403", async () => {
    const kid = randomBytes(16).toString("base64url");
    expect((await post(`mesh/jwk/${kid}`, { challenge: challenge() })).status).toBe(404);
    expect(
      (
        await post(
          `mesh/jwk/${kid}`,
          { challenge: challenge() },
          { origin: mesh.endpoints[0]!.slice(0, -1) },
        )
      ).status,
    ).toBe(403);
    expect(
      (await post(`mesh/jwk/${kid}`, { challenge: challenge() }, { host: "evil.example" })).status,
    ).toBe(403);
  });

  it("is rate-limited per source address (429 beyond 20 a second)", async () => {
    await new Promise((r) => setTimeout(r, 1100));
    const kid = randomBytes(16).toString("base64url");
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => post(`mesh/jwk/${kid}`, { challenge: challenge() })),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(10);
    expect(statuses.filter((s) => s === 404).length).toBeLessThanOrEqual(20);
    expect(new Set(statuses)).toEqual(new Set([404, 429]));
  });
});
