import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { MAX_JSON_DEPTH } from "../../src/contract/index.js";
import { http } from "../helpers/http.js";
import { runCli, startInstance, type TestInstance } from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";

// Issue 8, items 6, 11, 18 and 23: deep JSON, upserts that bypass the claim
// rules, refusals in a person's words, and counts that add up.

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

/** `{"a":{"a":…}}` nested `levels` deep, built as text (as an attacker would
 * send it: ~10 KB for 5,000 levels). */
function deepText(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
}

/** A value exactly `levels` deep, as an object. */
function deep(levels: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

async function addItem(inst: TestInstance, item: Record<string, unknown>) {
  const r = await http(inst.http, "POST", "/api/work-items", item);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.item as Record<string, unknown>;
}

describe("deep JSON", () => {
  it("a work item nested 5,000 deep is refused with 400, keeps no slot, and SIGTERM still stops", async () => {
    const inst = await startInstance();
    await addItem(inst, { id: "fine", title: "fine" });
    const deepBodies = [
      ["/api/work-items", `{"id":"deep","title":"deep","metadata":${deepText(5000)}}`],
      ["/api/work-items", `{"id":"deep","title":"deep","metadata":${deepText(5000)}}`],
      // Claims and moves ignore unknown fields, but a deep body is refused
      // before anything runs all the same.
      ["/api/work-items/fine/claim", `{"owner":"alice","extra":${deepText(5000)}}`],
      ["/api/work-items/fine/move", `{"lane":"done","extra":${deepText(5000)}}`],
    ] as const;
    const refused = [];
    for (const [path, body] of deepBodies) refused.push(await http(inst.http, "POST", path, body));
    // No slot was kept: mutations still run, and a graceful stop finishes.
    const claim = await http(inst.http, "POST", "/api/work-items/fine/claim", { owner: "alice" });
    const move = await http(inst.http, "POST", "/api/work-items/fine/move", { lane: "done" });
    expect([claim.status, move.status]).toEqual([200, 200]);
    expect(await inst.stop()).toBe(0);
    for (const r of refused) {
      expect(r.status).toBe(400);
      expect(r.body.ok).toBe(false);
      expect(String(r.body.error)).toContain(`${MAX_JSON_DEPTH} levels`);
    }
  });

  it("metadata at the limit is kept; one level more is refused", async () => {
    const inst = await startInstance();
    const ok = await http(inst.http, "POST", "/api/work-items", {
      id: "edge",
      title: "edge",
      metadata: deep(MAX_JSON_DEPTH),
    });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((ok.body.item as { metadata: unknown }).metadata).toEqual(deep(MAX_JSON_DEPTH));
    const over = await http(inst.http, "POST", "/api/work-items", {
      id: "edge",
      title: "edge",
      metadata: deep(MAX_JSON_DEPTH + 1),
    });
    expect(over.status).toBe(400);
    expect(over.body.error).toBe(
      `metadata nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`,
    );
    expect(await inst.stop()).toBe(0);
  });

  it("kv_write refuses a value deeper than the limit with invalid_args; the connection stays up", async () => {
    const inst = await startInstance();
    const p = await Peer.unix(inst.socket);
    await p.helloUser();
    // Sent as text: the test's own JSON.stringify could not build it.
    p.raw(
      `{"op":"kv_write","request_id":"deep-1","ns":"n","key":"k","value":${deepText(5000)}}\n`,
      { "deep-1": "kv_write" },
    );
    // Replies come in order: once the ping is answered, so is the write.
    await p.call("instance_ping");
    const r = p.lines.find((l) => (l as { request_id?: string }).request_id === "deep-1") as {
      ok: boolean;
      error?: { code: string; msg: string };
    };
    expect(r.ok).toBe(false);
    expect(r.error?.code).toBe("invalid_args");
    expect(r.error?.msg).toContain(`${MAX_JSON_DEPTH} levels`);
    const fine = await p.request("kv_write", { ns: "n", key: "k", value: deep(MAX_JSON_DEPTH) });
    expect(fine.error).toBeUndefined();
    expect((await p.call("kv_read", { ns: "n", key: "k" })).value).toEqual(deep(MAX_JSON_DEPTH));
    p.close();
    expect(await inst.stop()).toBe(0);
  });
});

describe("POST /api/work-items on an existing item", () => {
  const owner = (inst: TestInstance, id: string) => {
    const d = new Database(join(inst.stateDir, "ccmsg.db"), { readonly: true });
    try {
      return d.prepare("SELECT owner, status FROM work_items WHERE id = ?").get(id);
    } finally {
      d.close();
    }
  };

  it("obeys the claim rules: no taking an item someone else owns, no reopening a done one", async () => {
    const inst = await startInstance();
    await addItem(inst, { id: "owned", title: "owned" });
    await http(inst.http, "POST", "/api/work-items/owned/claim", { owner: "alice" });
    await addItem(inst, { id: "fin", title: "finished", status: "done" });

    const take = await http(inst.http, "POST", "/api/work-items", {
      id: "owned",
      owner: "mallory",
    });
    expect(take.status).toBe(400);
    expect(String(take.body.error)).toContain("already owned by alice");
    const reopen = await http(inst.http, "POST", "/api/work-items", { id: "fin", status: "open" });
    expect(reopen.status).toBe(400);
    expect(String(reopen.body.error)).toContain("is done");
    expect(owner(inst, "owned")).toEqual({ owner: "alice", status: "running" });
    expect(owner(inst, "fin")).toEqual({ owner: null, status: "done" });

    // The owner may still edit their item, and a move still reopens a done one.
    const edit = await http(inst.http, "POST", "/api/work-items", {
      id: "owned",
      owner: "alice",
      title: "renamed",
    });
    expect(edit.status).toBe(200);
    expect(
      (await http(inst.http, "POST", "/api/work-items/fin/move", { lane: "ready" })).status,
    ).toBe(200);
    expect(await inst.stop()).toBe(0);
  });

  it("an unknown sessionId is 400, not 500", async () => {
    const inst = await startInstance();
    const r = await http(inst.http, "POST", "/api/work-items", {
      title: "orphan",
      sessionId: "no-such-session",
    });
    expect(r.status).toBe(400);
    expect(String(r.body.error)).toContain("no-such-session");
    expect(await inst.stop()).toBe(0);
  });
});

describe("refusals a person can read", () => {
  it("claim and move of an unknown item answer 404 over HTTP and not_found in the CLI", async () => {
    const inst = await startInstance();
    const env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
    for (const [path, body] of [
      ["/api/work-items/nope/claim", { owner: "alice" }],
      ["/api/work-items/nope/move", { lane: "done" }],
    ] as const) {
      const r = await http(inst.http, "POST", path, body);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ ok: false, error: "work item nope not found" });
    }
    for (const args of [
      ["board", "claim", "nope", "--owner", "alice"],
      ["board", "move", "nope", "done"],
    ]) {
      const r = await runCli(args, env);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain("not_found");
      expect(r.stderr).toContain("work item nope not found");
    }
    expect(await inst.stop()).toBe(0);
  });

  it("validation errors name the field and the rule, never a schema kind or a pattern", async () => {
    const inst = await startInstance();
    await addItem(inst, { id: "v", title: "v" });
    const cases: [string, unknown, string][] = [
      ["/api/work-items", { title: "" }, "title must be text of 1 to 1000 characters"],
      [
        "/api/work-items",
        { title: "t", id: "x".repeat(201) },
        "id must be text of 1 to 200 characters",
      ],
      [
        "/api/work-items",
        { title: "t", priority: "bogus" },
        "priority must be 'critical', 'high', 'urgent', 'medium', 'normal' or 'low' (or null)",
      ],
      [
        "/api/work-items",
        { title: "t", owner: 5 },
        "owner must be text of at most 200 characters (or null)",
      ],
      ["/api/work-items", [1, 2], "the request body must be a JSON object"],
      [
        "/api/work-items/v/claim",
        { owner: "o".repeat(201) },
        "owner must be text of 1 to 200 characters",
      ],
    ];
    for (const [path, body, words] of cases) {
      const r = await http(inst.http, "POST", path, body);
      expect(r.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(r.body.error).toBe(words);
    }
    expect(await inst.stop()).toBe(0);
  });

  it("board add --priority bogus is refused and adds nothing", async () => {
    const inst = await startInstance();
    const env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
    const r = await runCli(["board", "add", "--title", "t", "--priority", "bogus"], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      "priority must be 'critical', 'high', 'urgent', 'medium', 'normal' or 'low'",
    );
    const list = JSON.parse((await runCli(["board", "list", "--json"], env)).stdout);
    expect(list.totalCount).toBe(0);
    const ok = await runCli(
      ["board", "add", "--title", "t", "--priority", "urgent", "--json"],
      env,
    );
    expect(ok.code, ok.stderr).toBe(0);
    // A session the store does not know is the caller's mistake, not ours.
    const id = JSON.parse(ok.stdout).item.id as string;
    const orphan = await runCli(["board", "update", id, "--session-id", "nobody"], env);
    expect(orphan.stderr).toContain("invalid_args");
    expect(orphan.stderr).toContain("unknown session nobody");
    const claim = await runCli(
      ["board", "claim", id, "--owner", "a", "--session-id", "nobody"],
      env,
    );
    expect(claim.stderr).toContain("unknown session nobody");
    expect(await inst.stop()).toBe(0);
  });
});

describe("a full disk", () => {
  it("a board mutation is refused in the store words (500, internal_error, nothing was stored), and works again once space returns", async () => {
    const inst = await startInstance();
    await addItem(inst, { id: "before", title: "before" });
    await http(inst.http, "POST", "/_test/disk-full", { full: true });
    // Fill what room the file has left, then every write is refused.
    let refused: Awaited<ReturnType<typeof http>> | undefined;
    for (let i = 0; i < 2000 && refused === undefined; i++) {
      const r = await http(inst.http, "POST", "/api/work-items", {
        id: `fill-${i}`,
        title: "fill",
        description: "x".repeat(30_000),
      });
      if (r.status !== 200) refused = r;
    }
    expect(refused?.status).toBe(500);
    expect(refused?.body).toMatchObject({ ok: false, code: "internal_error" });
    expect(String(refused?.body.error)).toMatch(/^nothing was stored: the disk holding .* is full/);
    // Reads go on.
    expect((await http(inst.http, "GET", "/api/health")).status).toBe(200);
    await http(inst.http, "POST", "/_test/disk-full", { full: false });
    await addItem(inst, { id: "after", title: "after" });
    expect(await inst.stop()).toBe(0);
  }, 60_000);
});

describe("counts that add up", () => {
  it("board list and status --markdown state the same counts, blocked as a part of open", async () => {
    const inst = await startInstance();
    const env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
    for (const [id, status] of [
      ["a", "open"],
      ["b", "running"],
      ["c", "blocked"],
      ["d", "needs-review"],
      ["e", "done"],
    ])
      await addItem(inst, { id, title: id, status });
    const sentence = "4 open (2 of them blocked), 1 done — 5 in all";
    const list = await runCli(["board", "list", "--text"], env);
    expect(list.stdout.split("\n")[0]).toBe(sentence);
    const md = await runCli(["status", "--markdown"], env);
    expect(md.stdout).toContain(`- ${sentence.replace(/\d+/g, (n) => `\`${n}\``)}\n`);
    const text = await runCli(["status", "--text"], env);
    expect(text.stdout).toContain(`Work items: ${sentence}\n`);
    expect(await inst.stop()).toBe(0);
  });
});

describe("the snapshot's sessions", () => {
  it("a session that ran a one-shot command and left is idle, not failed", async () => {
    const inst = await startInstance();
    const env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
    const watcher = await Peer.unix(inst.socket);
    await watcher.helloUser();
    await watcher.subscribe("peers");
    const sid = newSid();
    const r = await runCli(["hello", "--sid", sid], env);
    expect(r.code, r.stderr).toBe(0);
    await watcher.next(
      (f) =>
        f.topic === "peers" &&
        (f.data as { last_live: { sid: string }[] }).last_live.some((l) => l.sid === sid),
    );
    const snap = await http(inst.http, "GET", "/api/snapshot");
    expect(snap.body.summary).toMatchObject({
      totalSessions: 1,
      failedSessions: 0,
      idleSessions: 1,
    });
    watcher.close();
    expect(await inst.stop()).toBe(0);
  });

  it("limit bounds the lost sessions listed, never the work items", async () => {
    const inst = await startInstance();
    for (let i = 0; i < 15; i++) await addItem(inst, { id: `i${i}`, title: `item ${i}` });
    const watcher = await Peer.unix(inst.socket);
    await watcher.helloUser();
    await watcher.subscribe("peers");
    const sids = [newSid(), newSid(), newSid()];
    for (const sid of sids) {
      const p = await Peer.unix(inst.socket);
      await p.helloSession(sid);
      p.close();
    }
    await watcher.next(
      (f) =>
        f.topic === "peers" &&
        (f.data as { last_live: unknown[] }).last_live.length === sids.length,
    );
    const snap = await http(inst.http, "GET", "/api/snapshot?limit=1");
    expect((snap.body.sessions as unknown[]).length).toBe(1);
    expect(snap.body.summary).toMatchObject({ totalSessions: 3 });
    expect((snap.body.workItems as { items: unknown[] }).items).toHaveLength(15);
    watcher.close();
    expect(await inst.stop()).toBe(0);
  });
});
