import { afterEach, describe, expect, it } from "vitest";
import * as limits from "../../src/contract/constants.js";
import { MAX_FRAME_BYTES } from "../../src/contract/index.js";
import { sharedInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Issue 8, item 12: MAX_FRAME_BYTES holds in both directions. Whatever a
// client sends within the ceiling, nothing the instance writes exceeds it.

const shared = sharedInstance();
afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

/** A peer whose every inbound line is measured. */
async function measured(): Promise<{ peer: Peer; largest: () => number }> {
  const peer = await Peer.unix(shared.inst.socket);
  let largest = 0;
  peer.client.onLine((line) => {
    largest = Math.max(largest, Buffer.byteLength(line));
  });
  return { peer, largest: () => largest };
}

/** The line `head + filler + tail`, exactly `bytes` long with its newline. */
function exactly(bytes: number, head: string, tail: string): string {
  return `${head}${"x".repeat(bytes - 1 - head.length - tail.length)}${tail}\n`;
}

/** Resolve with the first line that matches. */
function nextLine(peer: Peer, pred: (parsed: Record<string, unknown>) => boolean) {
  return new Promise<Record<string, unknown>>((resolve) => {
    peer.client.onLine((_line, parsed) => {
      const p = parsed as Record<string, unknown> | undefined;
      if (p !== undefined && pred(p)) resolve(p);
    });
  });
}

/** Characters that JSON writes as six bytes each (`\u0001`): the worst case
 * of serialising a string of a given length. */
const worst = (n: number) => "\u0001".repeat(n);

describe("echoed request fields", () => {
  it("a request_id filling the frame is refused, not echoed into an oversized reply", async () => {
    const { peer, largest } = await measured();
    await peer.helloUser();
    const refused = nextLine(peer, (p) => typeof p.ok === "boolean");
    peer.raw(exactly(MAX_FRAME_BYTES + 1, `{"op":"instance_ping","request_id":"`, `"}`));
    expect(await refused).toEqual({
      ok: false,
      error: { code: "bad_request", msg: expect.stringContaining("request_id") },
    });
    expect((await peer.request("instance_ping")).ok).toBe(true);
    expect(largest()).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    peer.close();
  });

  it("a topic name filling the frame is refused with a short answer", async () => {
    const { peer, largest } = await measured();
    await peer.helloUser();
    const replied = nextLine(peer, (p) => p.request_id === "t");
    peer.raw(
      exactly(MAX_FRAME_BYTES + 1, `{"op":"topic_subscribe","request_id":"t","topic":"kv:`, `"}`),
      { t: "topic_subscribe" },
    );
    expect(await replied).toMatchObject({
      ok: false,
      error: { code: "invalid_args", msg: expect.stringContaining("/topic") },
    });
    expect(largest()).toBeLessThan(64 * 1024);
    peer.close();
  });
});

describe("KV values", () => {
  it("a value that could not be carried to subscribers is refused with invalid_args", async () => {
    const { peer, largest } = await measured();
    await peer.helloUser();
    await peer.subscribe("kv:ceiling");
    const replied = nextLine(peer, (p) => p.request_id === "v");
    peer.raw(
      exactly(
        MAX_FRAME_BYTES + 1,
        `{"op":"kv_write","request_id":"v","ns":"ceiling","key":"k","value":"`,
        `"}`,
      ),
      { v: "kv_write" },
    );
    expect(await replied).toMatchObject({
      ok: false,
      error: { code: "invalid_args", msg: expect.stringContaining("/value") },
    });
    expect(largest()).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    peer.close();
  });

  it("is measured as the instance writes it: short numbers that serialise long count long", async () => {
    const { peer, largest } = await measured();
    await peer.helloUser();
    await peer.subscribe("kv:ceiling");
    // 1e20 is 4 bytes sent and 21 written back (100000000000000000000).
    const value = `[${Array(100_000).fill("1e20").join(",")}]`;
    const replied = nextLine(peer, (p) => p.request_id === "n");
    peer.raw(`{"op":"kv_write","request_id":"n","ns":"ceiling","key":"n","value":${value}}\n`, {
      n: "kv_write",
    });
    expect(await replied).toMatchObject({ ok: false, error: { code: "invalid_args" } });
    expect(largest()).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    peer.close();
  });
});

describe("the inbox frame", () => {
  it("message text that cannot fit an inbox frame is refused with invalid_args", async () => {
    const { peer: receiver, largest } = await measured();
    const to = newSid();
    await receiver.helloSession(to);
    await receiver.subscribe("inbox");
    const sender = await Peer.unix(shared.inst.socket);
    await sender.helloSession(newSid(), { title: "sender" });
    const replied = nextLine(sender, (p) => p.request_id === "big");
    sender.raw(
      exactly(
        MAX_FRAME_BYTES + 1,
        `{"op":"message_send","request_id":"big","to":"${to}","text":"`,
        `"}`,
      ),
      { big: "message_send" },
    );
    expect(await replied).toMatchObject({
      ok: false,
      error: { code: "invalid_args", msg: expect.stringContaining("/text") },
    });
    expect(largest()).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    receiver.close();
    sender.close();
  });

  it("a reply_to filling the frame is refused with invalid_args", async () => {
    const { peer: receiver, largest } = await measured();
    const to = newSid();
    await receiver.helloSession(to);
    await receiver.subscribe("inbox");
    const sender = await Peer.unix(shared.inst.socket);
    await sender.helloSession(newSid());
    const replied = nextLine(sender, (p) => p.request_id === "rt");
    sender.raw(
      exactly(
        MAX_FRAME_BYTES + 1,
        `{"op":"message_send","request_id":"rt","to":"${to}","text":"hi","reply_to":"${"a".repeat(32)}/`,
        `"}`,
      ).replace(/x/g, "7"),
      { rt: "message_send" },
    );
    expect(await replied).toMatchObject({
      ok: false,
      error: { code: "invalid_args", msg: expect.stringContaining("/reply_to") },
    });
    expect(largest()).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    receiver.close();
    sender.close();
  });

  it("the longest text from the longest label is delivered within one frame", async () => {
    const { peer: receiver, largest } = await measured();
    const to = newSid();
    await receiver.helloSession(to);
    await receiver.subscribe("inbox");
    const sender = await Peer.unix(shared.inst.socket);
    await sender.helloSession(newSid(), { title: worst(limits.TITLE_MAX_CHARS) });
    const text = worst(limits.MESSAGE_TEXT_MAX_CHARS);
    const frame = receiver.next((p) => p.topic === "inbox" && p.snapshot !== true);
    expect(await sender.call("message_send", { to, text })).toEqual({ delivered: true });
    expect(((await frame).data as { text: string }[])[0]!.text).toBe(text);
    expect(largest()).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    receiver.close();
    sender.close();
  });
});

describe("lists in a reply", () => {
  it("message_send offers at most CANDIDATES_MAX candidates, most recently active first", async () => {
    const repo = `/repo-${newSid()}`;
    const gone = await Peer.unix(shared.inst.socket);
    const goneSid = newSid();
    await gone.helloSession(goneSid, { cwd: repo });
    const live: Peer[] = [];
    const sids: string[] = [];
    for (let i = 0; i <= limits.CANDIDATES_MAX; i++) {
      const p = await Peer.unix(shared.inst.socket);
      const sid = newSid();
      await p.helloSession(sid, { cwd: repo });
      live.push(p);
      sids.push(sid);
    }
    await live[0]!.call("instance_ping");
    const person = await Peer.unix(shared.inst.socket);
    await person.helloUser();
    await person.subscribe("peers");
    gone.close();
    await person.next((p) =>
      ((p.data as { last_live: { sid: string }[] }).last_live ?? []).some((r) => r.sid === goneSid),
    );
    const reply = await person.call<{ reason?: string; candidates?: { sid: string }[] }>(
      "message_send",
      { to: goneSid, text: "hello?" },
    );
    expect(reply.reason).toBe("disappeared");
    expect(reply.candidates).toHaveLength(limits.CANDIDATES_MAX);
    expect(reply.candidates![0]!.sid).toBe(sids[0]);
    for (const p of [...live, person]) p.close();
  });
});

describe("the peers frame", () => {
  it("hello meta beyond its stated limit is refused with invalid_args", async () => {
    const peer = await Peer.unix(shared.inst.socket);
    const reply = await peer.request("hello", {
      role: "session",
      protocol_version: 3,
      sid: newSid(),
      cwd: `/${"d".repeat(400_000)}`,
    });
    expect(reply.error).toMatchObject({
      code: "invalid_args",
      msg: expect.stringContaining("/cwd"),
    });
    peer.close();
  });

  it("many sessions with the longest meta never make a peers frame over the ceiling", async () => {
    const { peer: watcher, largest } = await measured();
    await watcher.helloUser();
    await watcher.subscribe("peers");
    const path = `/${worst(limits.META_PATH_MAX_CHARS - 1)}`;
    const name = worst(limits.META_NAME_MAX_CHARS);
    const meta = {
      cwd: path,
      repo_root: path,
      repo: name,
      ws: name,
      branch: name,
      model: name,
      effort: name,
      title: worst(limits.TITLE_MAX_CHARS),
      client_version: name,
    };
    const sessions: Peer[] = [];
    for (let i = 0; i < 16; i++) {
      const s = await Peer.unix(shared.inst.socket);
      await s.helloSession(newSid(), meta);
      sessions.push(s);
    }
    // The newest session is listed: rows left out are the least recently active.
    const newest = await Peer.unix(shared.inst.socket);
    const sid = newSid();
    await newest.helloSession(sid, { title: "newest" });
    const seen = await watcher.next((p) =>
      ((p.data as { peers: { sid: string }[] }).peers ?? []).some((r) => r.sid === sid),
    );
    expect(seen.topic).toBe("peers");
    expect(largest()).toBeLessThanOrEqual(MAX_FRAME_BYTES);
    for (const s of [...sessions, newest]) s.close();
    watcher.close();
  });
});
