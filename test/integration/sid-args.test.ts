import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { TestInstance } from "../helpers/instance.js";
import { runCli, sharedInstance } from "../helpers/instance.js";
import { startMesh, type TestMesh } from "../helpers/mesh.js";
import { contractViolations, Peer } from "../helpers/peer.js";

// Issue 25 item 7: a session named on the command line by a unique prefix of
// its id (what `ccmsg peers` shows) or by its title, through the built CLI
// against a real instance. Each test's sessions start with their own hex, so
// no two tests' prefixes meet on the file's one instance.

const shared = sharedInstance();
const opened: Peer[] = [];
afterEach(() => expect(contractViolations.splice(0)).toEqual([]));
afterAll(() => {
  for (const p of opened) p.close();
});

/** A random sid beginning with `hex`. */
function sidStarting(hex: string): string {
  const rest = randomUUID().replaceAll("-", "").slice(hex.length);
  const h = hex + rest;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** A session greeted with `title`, listening to its inbox. */
async function listening(socket: string, sid: string, title?: string): Promise<Peer> {
  const p = await Peer.unix(socket);
  opened.push(p);
  await p.helloSession(sid, title === undefined ? {} : { title });
  await p.subscribe("inbox");
  return p;
}

function arrival(p: Peer): Promise<{ from: string; text: string; reply_to?: string }> {
  return p
    .next((f) => f.topic === "inbox" && !f.snapshot)
    .then((f) => (f.data as { from: string; text: string }[])[0]!);
}

const errorOf = (r: { stderr: string }) =>
  (JSON.parse(r.stderr) as { error: { code: string; msg: string; candidates?: unknown[] } }).error;

describe("a session named by a prefix of its id or by its title", () => {
  it("ccmsg post <4 hex> and ccmsg post @title deliver to that session", async () => {
    const B = sidStarting("b0b0");
    const b = await listening(shared.inst.socket, B, "beta");
    for (const [to, text] of [
      ["b0b0", "by prefix"],
      [B.slice(0, 8), "by what peers shows"],
      ["@beta", "by @title"],
      ["beta", "by title"],
    ] as const) {
      const got = arrival(b);
      const r = await runCli(["post", to, text], shared.env);
      expect({ to, code: r.code, stderr: r.stderr }).toEqual({ to, code: 0, stderr: "" });
      expect(JSON.parse(r.stdout)).toEqual({ delivered: true });
      expect(await got).toMatchObject({ from: "user", text });
    }
  });

  it("reply --to, notify --about and --sid take a prefix or title too", async () => {
    const A = sidStarting("a1a1");
    const C = sidStarting("c3c3");
    const c = await listening(shared.inst.socket, C, "gamma");
    await listening(shared.inst.socket, A, "alpha");
    // As A named by its prefix, to C named by its title.
    const got = arrival(c);
    const sent = await runCli(["post", "@gamma", "hi", "--sid", "a1a1"], shared.env);
    expect(sent.code, sent.stderr).toBe(0);
    const first = await got;
    expect(first).toMatchObject({ from: A, text: "hi" });
    const answer = arrival(c);
    const replied = await runCli(
      ["reply", `${shared.inst.id}/1`, "--to", "c3c3", "thanks", "--sid", A],
      shared.env,
    );
    expect(replied.code, replied.stderr).toBe(0);
    expect(await answer).toMatchObject({ from: A, text: "thanks" });
    const watcher = await Peer.unix(shared.inst.socket);
    opened.push(watcher);
    await watcher.helloUser();
    await watcher.call("topic_subscribe", { topic: "notify" });
    const note = watcher.next((f) => f.topic === "notify");
    const notified = await runCli(["notify", "--about", "@alpha", "look"], shared.env);
    expect(notified.code, notified.stderr).toBe(0);
    expect((await note).data).toMatchObject({ sid: A, text: "look" });
  });

  it("an ambiguous prefix exits non-zero, delivers nothing and lists the candidates", async () => {
    const [one, two] = [sidStarting("d4d4d40"), sidStarting("d4d4d4f")];
    const first = await listening(shared.inst.socket, one, "one");
    await listening(shared.inst.socket, two, "two");
    const json = await runCli(["post", "d4d4", "for whom?", "--json"], shared.env);
    expect(json.code).toBe(1);
    expect(json.stdout).toBe("");
    const error = errorOf(json);
    expect(error.code).toBe("invalid_args");
    expect(error.msg).toMatch(/^the recipient "d4d4" matches 2 sessions/);
    expect(error.candidates).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ sid: one, title: "one", live: true }),
        expect.objectContaining({ sid: two, title: "two", live: true }),
      ]),
    );
    const text = await runCli(["post", "d4d4d4", "for whom?", "--text"], shared.env);
    expect(text.code).toBe(1);
    const line = text.stderr.trim();
    expect(line.split("\n")).toHaveLength(1);
    expect(line).toMatch(/^ccmsg post: the recipient "d4d4d4" matches 2 sessions/);
    expect(line).toContain(`${one.slice(0, 8)}: live, "one"`);
    expect(line).toContain(`${two.slice(0, 8)}: live, "two"`);
    // A longer prefix picks one out.
    const got = arrival(first);
    expect((await runCli(["post", one.slice(0, 7), "you"], shared.env)).code).toBe(0);
    expect(await got).toMatchObject({ text: "you" });
    expect(first.frames.filter((f) => f.topic === "inbox" && !f.snapshot)).toHaveLength(1);
  });

  it("a prefix too short or unknown is refused naming the argument in words, never a schema pointer", async () => {
    const short = await runCli(["post", "e5e", "x"], shared.env);
    expect(short.code).toBe(1);
    expect(errorOf(short)).toEqual({
      code: "invalid_args",
      msg: 'the recipient "e5e" is too short: give at least 4 hex digits of a session id, or a session\'s title (@title)',
    });
    const unknown = await runCli(["post", "f2d00f93", "x"], shared.env);
    expect(unknown.code).toBe(1);
    expect(errorOf(unknown)).toEqual({
      code: "session_not_found",
      msg: 'the recipient "f2d00f93" is not a session id, prefix or title known here (ccmsg peers lists the sessions)',
    });
    const title = await runCli(["dump", "@nobody-has-this"], shared.env);
    expect(errorOf(title).code).toBe("session_not_found");
    expect(errorOf(title).msg).toMatch(/^the session "@nobody-has-this": no session known here/);
    // What the instance itself refuses is named in words too.
    // Over MESSAGE_TEXT_MAX_CHARS, in two arguments (one may hold 128 KiB).
    const half = "y".repeat(70_000);
    const long = await runCli(["post", sidStarting("e5e5"), half, half], shared.env);
    expect(errorOf(long).code).toBe("invalid_args");
    expect(errorOf(long).msg).toMatch(/^the text: /);
    for (const r of [short, unknown, title, long])
      expect(r.stderr).not.toMatch(/"\/[a-z_]+:|\/to\b/);
  });
});

describe("across the mesh", () => {
  let mesh: TestMesh;
  let A: TestInstance;
  let B: TestInstance;
  beforeAll(async () => {
    mesh = await startMesh(2);
    [A, B] = mesh.instances as [TestInstance, TestInstance];
    await mesh.waitLinked();
  }, 60_000);
  afterAll(async () => {
    await mesh.stop();
  });

  it("a prefix or title of a session on another instance reaches it", async () => {
    const S = sidStarting("f6f6");
    const watcher = await Peer.unix(A.socket);
    opened.push(watcher);
    await watcher.helloUser();
    const listed = watcher.next(
      (f) =>
        f.topic === "peers" &&
        f.instance === B.id &&
        (f.data as { peers: { sid: string }[] }).peers.some((r) => r.sid === S),
    );
    await watcher.call("topic_subscribe", { topic: "peers" });
    const s = await listening(B.socket, S, "remote");
    await listed;
    for (const to of ["f6f6", "@remote"]) {
      const got = arrival(s);
      const r = await runCli(["post", to, `via ${to}`], mesh.env(0));
      expect({ to, code: r.code, stderr: r.stderr }).toEqual({ to, code: 0, stderr: "" });
      expect(await got).toMatchObject({ text: `via ${to}` });
    }
  });
});
