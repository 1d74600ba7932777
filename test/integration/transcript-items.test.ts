import { execFile } from "node:child_process";
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { renderDirectDelivery } from "../../src/contract/direct-delivery.js";
import { SessionDumpFile } from "../../src/contract/transcripts.js";
import { validationErrors } from "../../src/contract/validate.js";
import { requiredPath } from "../helpers/env.js";
import {
  CLI,
  childEnv,
  isolatedHome,
  ROOT,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { claudeTurn, codexExtras, codexTurn } from "../helpers/transcript-records.js";

// Issue 10 item 2: typed items over the wire — transcript_items_read,
// transcript_items:<sid>, session_dump_write, dump_presets_read and
// `ccmsg dump` — against a real instance and real-format files. The Peer
// helper validates every reply and frame against the contract.

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

const SID = "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d";
const AGENT = "a7c3e91f04d2b685";
const FIX = join(ROOT, "test", "fixtures");

type Item = { id: string; uuid: string; type: string; at: number; [k: string]: unknown };
type Slice = { items: Item[]; next?: string; ids?: { kind: string; id: string }[] };

let inst: TestInstance;
let home: string;
let person: Peer;
let main: string;
const peers: Peer[] = [];
beforeAll(async () => {
  inst = await startInstance();
  home = requiredPath(inst.env, "CLAUDE_CONFIG_DIR");
  cpSync(join(FIX, "claude-code", "config-home", "projects"), join(home, "projects"), {
    recursive: true,
  });
  main = join(home, "projects", "-home-dev-widgets", `${SID}.jsonl`);
  person = await Peer.unix(inst.socket);
  await person.helloUser();
});
afterAll(async () => {
  for (const p of [person, ...peers]) p.client.close();
  await inst.stop();
});

/** A session with its own transcript of `lines`. */
function transcript(lines: string[]): { sid: string; path: string } {
  const sid = newSid();
  const dir = join(home, "projects", "-work-items");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${sid}.jsonl`);
  writeFileSync(path, lines.map((l) => `${l}\n`).join(""));
  return { sid, path };
}

const read = (args: Record<string, unknown>) => person.call<Slice>("transcript_items_read", args);

/** Every item of a transcript, paged with `limit` and `next`. */
async function readAll(args: Record<string, unknown>, limit: number): Promise<Item[]> {
  const out: Item[] = [];
  let since: string | undefined;
  for (;;) {
    const r = await read({ ...args, limit, ...(since === undefined ? {} : { since_id: since }) });
    out.push(...r.items);
    if (r.next === undefined) return out;
    expect(r.items.length).toBeLessThanOrEqual(limit);
    since = r.next;
  }
}

describe("transcript_items_read", () => {
  it("reads the fixture as typed items, the same ids every time, links both ways", async () => {
    const a = await read({ sid: SID });
    const b = await read({ sid: SID });
    expect(b).toEqual(a);
    expect(a.next).toBeUndefined();
    expect(a.items.map((i) => i.type)).toContain("message:session:in");
    const envelopeItem = a.items.find((i) => i.type === "message:session:in")!;
    expect(envelopeItem.text).toBe(
      "The API schema for claims is merged; you can call POST /claims now.",
    );
    const byId = new Map(a.items.map((i) => [i.id, i]));
    for (const item of a.items) {
      if (item.parent_item !== undefined)
        expect(byId.get(item.parent_item as string)?.result_item).toBe(item.id);
      if (item.result_item !== undefined)
        expect(byId.get(item.result_item as string)?.parent_item).toBe(item.id);
    }
    // The ledger names the sub-agent and the message it read.
    expect(a.ids).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: "agent", id: AGENT, status: "completed" }),
        expect.objectContaining({ kind: "msg", id: "0f3a9c2e51b84d7a9e6c1b2d3f4a5b6c/412" }),
        expect.objectContaining({
          kind: "tool_use",
          id: "toolu_01Bash0000000000000000001",
          status: "pending",
        }),
      ]),
    );
  });

  it("classifies a half-written last line once it is complete, and links its call then", async () => {
    const { sid, path } = transcript(readFileSync(main, "utf8").split("\n").slice(0, -1));
    appendFileSync(
      path,
      '{"parentUuid":"a-0014","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01Bash',
    );
    const before = await read({ sid, types: ["tool:Bash"] });
    expect(before.items).toHaveLength(1);
    expect(before.items[0]!.result_item).toBeUndefined();
    appendFileSync(
      path,
      '0000000000000000001","type":"tool_result","content":"212 passed"}]},"uuid":"u-0016","timestamp":"2026-11-30T10:01:20.000Z","toolUseResult":{"stdout":"212 passed","stderr":"","interrupted":false}}\n',
    );
    const after = await read({ sid, types: ["tool:Bash"] });
    expect(after.items.map((i) => [i.id, i.role])).toEqual([
      ["a-0014:1", "use"],
      ["u-0016:0", "result"],
    ]);
    expect(after.items[0]!.result_item).toBe("u-0016:0");
    expect(after.items[1]).toMatchObject({ parent_item: "a-0014:1", stdout: "212 passed" });
  });

  it("pages with limit and next across checkpoints, and since_id resumes exactly", async () => {
    const lines = Array.from({ length: 12 }, (_, n) => claudeTurn(n)).flat();
    const { sid } = transcript(lines);
    const whole = await readAll({ sid }, 500);
    expect(whole.length).toBeGreaterThan(700);
    for (const limit of [1, 7, 333]) {
      const paged =
        limit === 1
          ? await readAll({ sid, until_uuid: "t1-r5" }, 1)
          : await readAll({ sid }, limit);
      expect(paged).toEqual(limit === 1 ? whole.slice(0, paged.length) : whole);
    }
    // A start deep in the file: the same items as the whole read from there.
    const at = whole[600]!;
    const tail = await read({ sid, since_id: at.id, limit: 50 });
    expect(tail.items).toEqual(whole.slice(600, 650));
    expect(tail.next).toBe(whole[650]!.id);
  });

  it("bounds by uuid and by time, and selects types left to right", async () => {
    const { sid } = transcript([...claudeTurn(0), ...claudeTurn(1), ...claudeTurn(2)]);
    const whole = await readAll({ sid }, 500);
    const byUuid = await read({ sid, since_uuid: "t1-r1", until_uuid: "t1-r3" });
    expect(new Set(byUuid.items.map((i) => i.uuid))).toEqual(new Set(["t1-r1", "t1-r2", "t1-r3"]));
    const t1 = whole.filter((i) => i.uuid.startsWith("t1-"));
    const byTime = await read({ sid, since_at: t1[0]!.at, until_at: t1.at(-1)!.at });
    expect(byTime.items).toEqual(t1);
    const tools = await read({ sid, types: ["tool", "-tool:Read", "thinking"] });
    expect(new Set(tools.items.map((i) => i.type.split(":")[0]))).toEqual(
      new Set(["tool", "thinking"]),
    );
    expect(tools.items.some((i) => i.type === "tool:Read")).toBe(false);
    // The default leaves attachments out; asking for them brings them.
    expect(whole.some((i) => i.type.startsWith("system:attachment:"))).toBe(false);
    const att = await read({ sid, types: ["system:attachment"] });
    expect(att.items.map((i) => i.type)).toEqual(Array(3).fill("system:attachment:todo_reminder"));
    const noThinking = await read({ sid, types: ["-thinking"], limit: 500 });
    expect(noThinking.items).toEqual(
      whole.filter((i) => i.type !== "thinking").slice(0, noThinking.items.length),
    );
  });

  it("answers not_found, forbidden and invalid_args where the contract says", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ sid: newSid() }, "not_found"],
      [{ sid: SID, agent_id: "nobody" }, "not_found"],
      [{ sid: SID, since_uuid: "no-such-record" }, "not_found"],
      [{ sid: SID, since_id: "no-such-record:0" }, "not_found"],
      [{ sid: SID, types: ["@nope"] }, "not_found"],
      [{ sid: SID, agent_id: "../x" }, "invalid_args"],
      [{ sid: SID, since_uuid: "u-0001", since_at: 1 }, "invalid_args"],
      [{ sid: SID, limit: 0 }, "invalid_args"],
    ];
    for (const [args, code] of cases) {
      const r = await person.request("transcript_items_read", args);
      expect([JSON.stringify(args), r.error?.code]).toEqual([JSON.stringify(args), code]);
    }
    // A session reads its own transcript only.
    const own = transcript(claudeTurn(0));
    const peer = await Peer.unix(inst.socket);
    peers.push(peer);
    await peer.helloSession(own.sid, { cwd: "/work/items" });
    const mine = await peer.call<Slice>("transcript_items_read", { sid: own.sid, limit: 3 });
    expect(mine.items).toHaveLength(3);
    expect((await peer.request("transcript_items_read", { sid: SID })).error?.code).toBe(
      "forbidden",
    );
  });

  it("reads a sub-agent from its own side", async () => {
    const r = await read({ sid: SID, agent_id: AGENT });
    expect(r.items.map((i) => i.type)).toEqual([
      "message:user:in",
      "tool:Grep",
      "tool:Grep",
      "message:user:out",
    ]);
    expect(r.items[0]!.text).toBe("Where is the claim endpoint defined?");
  });
});

describe("transcript_items:<sid> (scenario 16, step 5)", () => {
  it("opens with the newest items, then carries each completed record's items once", async () => {
    const { sid, path } = transcript(claudeTurn(0));
    // A greeted with its transcript_path (accepted: it is under projects/).
    const a = await Peer.unix(inst.socket);
    peers.push(a);
    await a.helloSession(sid, { cwd: "/work/items", transcript_path: path });
    const topic = `transcript_items:${sid}`;
    const snap = await person.subscribe(topic);
    const items = (snap.data as { sid: string; items: Item[] }).items;
    expect((snap.data as { sid: string }).sid).toBe(sid);
    expect(items.length).toBeGreaterThan(10);
    expect(items.at(-1)!.text).toMatch(/^Done with turn 0/);

    // A delivered envelope in the contract's wording, written in two pieces.
    const body = "Ship it when green.\n\n(two lines)";
    const line = JSON.stringify({
      type: "user",
      uuid: "env-1",
      timestamp: "2026-11-30T12:00:00.000Z",
      message: {
        role: "user",
        content: renderDirectDelivery({
          mid: "0f3a9c2e51b84d7a9e6c1b2d3f4a5b6c/7",
          from: "8b2d4e6f-1a3c-4d5e-8f70-9a1b2c3d4e5f",
          from_label: "widgets-wt/api",
          text: body,
        }),
      },
    });
    appendFileSync(path, line.slice(0, 40));
    // A read makes the feed take in what is there now; any frame for the
    // partial line would be queued before its reply.
    await read({ sid, limit: 1 });
    expect(person.frames.filter((f) => f.topic === topic && f.snapshot !== true)).toHaveLength(0);
    appendFileSync(path, `${line.slice(40)}\n`);
    const frame = await person.next((f) => f.topic === topic && f.snapshot !== true);
    const got = (frame.data as { items: Item[] }).items;
    expect(got).toHaveLength(1);
    expect(got[0]).toEqual({
      id: "env-1:0",
      uuid: "env-1",
      source: {
        offset: statSync(path).size - Buffer.byteLength(line) - 1,
        bytes: Buffer.byteLength(line) + 1,
      },
      type: "message:session:in",
      at: Date.parse("2026-11-30T12:00:00.000Z"),
      turn: 3, // the prompt, the queued one, /model
      text: body,
      from: "8b2d4e6f-1a3c-4d5e-8f70-9a1b2c3d4e5f",
      msg_id: "0f3a9c2e51b84d7a9e6c1b2d3f4a5b6c/7",
    });
    await person.call("topic_unsubscribe", { topic });
  });
});

describe("transcript_items:<sid> for a file that appears later", () => {
  it("opens empty, then carries every item of the file from its first line", async () => {
    const sid = newSid();
    const topic = `transcript_items:${sid}`;
    const snap = await person.subscribe(topic);
    expect(snap.data).toEqual({ sid, items: [] });
    const dir = join(home, "projects", "-work-later");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${sid}.jsonl`), `${claudeTurn(3).join("\n")}\n`);
    const got: Item[] = [];
    while (!got.some((i) => String(i.text).startsWith("Done with turn 3"))) {
      const f = await person.next((p) => p.topic === topic && p.snapshot !== true);
      got.push(...(f.data as { items: Item[] }).items);
    }
    // The topic has no selection: attachments come too. A call went out
    // before its result existed, so only a later read links it to it.
    const every = ["message", "thinking", "notice", "system", "hook", "tool"];
    const read = await readAll({ sid, types: every }, 500);
    const unlinked = (items: Item[]) => items.map(({ result_item: _r, ...rest }) => rest);
    expect(unlinked(got)).toEqual(unlinked(read));
    expect(got.filter((i) => i.result_item !== undefined)).toEqual([]);
    await person.call("topic_unsubscribe", { topic });
  });
});

describe("session_dump_write and dump_presets_read", () => {
  it("writes a SessionDumpFile under the state dir, private, with counts per type and the ledger", async () => {
    const r = await person.call<{
      path: string;
      entries: Record<string, number>;
      ids: unknown[];
      bytes: number;
      instance: string;
    }>("session_dump_write", { sid: SID, no_thinking: true });
    expect(dirname(r.path)).toBe(join(inst.stateDir, "dumps"));
    expect(statSync(r.path).mode & 0o777).toBe(0o600);
    expect(statSync(dirname(r.path)).mode & 0o777).toBe(0o700);
    expect(statSync(r.path).size).toBe(r.bytes);
    expect(r.instance).toBe(inst.id);
    const file = JSON.parse(readFileSync(r.path, "utf8")) as {
      sid: string;
      types: string[];
      items: Item[];
      ids: unknown[];
    };
    expect(validationErrors(SessionDumpFile, file)).toEqual([]);
    expect(file.sid).toBe(SID);
    expect(file.types).toEqual(["-system:attachment", "-thinking"]);
    expect(file.items.some((i) => i.type === "thinking")).toBe(false);
    const counts: Record<string, number> = {};
    for (const i of file.items) counts[i.type] = (counts[i.type] ?? 0) + 1;
    expect(r.entries).toEqual(counts);
    expect(file.ids).toEqual(r.ids);
    const whole = await read({ sid: SID, types: ["-thinking"] });
    expect(file.items).toEqual(whole.items);
  });

  it("uses presets from the config as the base, refuses an unknown one, and lists them in order", async () => {
    const configDir = join(requiredPath(inst.env, "XDG_CONFIG_HOME"), "ccmsg");
    mkdirSync(configDir, { recursive: true });
    const defaults = await person.call<{ presets: { name: string }[] }>("dump_presets_read");
    expect(defaults.presets.map((p) => p.name)).toEqual(["conversation", "tools", "problems"]);
    const presets = [
      { name: "talk", description: "who said what", opts: { types: ["message"] } },
      { name: "work", opts: { types: ["@talk", "tool", "-tool:TodoWrite"] } },
    ];
    writeFileSync(join(configDir, "config.json"), JSON.stringify({ dump_presets: presets }));
    try {
      expect(await person.call("dump_presets_read")).toEqual({ presets });
      const r = await person.call<{ path: string; entries: Record<string, number> }>(
        "session_dump_write",
        {
          sid: SID,
          preset: "work",
          no_agent: true,
        },
      );
      const file = JSON.parse(readFileSync(r.path, "utf8")) as { types: string[] };
      expect(file.types).toEqual([
        "message",
        "tool",
        "-tool:TodoWrite",
        "-message:sub",
        "-tool:Agent",
      ]);
      expect(Object.keys(r.entries).sort()).toEqual([
        "message:session:in",
        "message:user:in",
        "message:user:out",
        "tool:Bash",
        "tool:Read",
        "tool:ScheduleWakeup",
      ]);
      for (const preset of ["nope", "not a name"]) {
        const missing = await person.request("session_dump_write", { sid: SID, preset });
        expect(missing.error?.code).toBe("not_found");
      }
      const viaTypes = await read({ sid: SID, types: ["@talk"] });
      expect(new Set(viaTypes.items.map((i) => i.type.split(":")[0]))).toEqual(
        new Set(["message"]),
      );
    } finally {
      rmSync(join(configDir, "config.json"));
    }
  });

  it("is a person's op: a session is refused", async () => {
    const peer = await Peer.unix(inst.socket);
    peers.push(peer);
    await peer.helloSession(newSid(), { cwd: "/work/x" });
    expect((await peer.request("session_dump_write", { sid: SID })).error?.code).toBe("forbidden");
    expect((await peer.call<{ presets: unknown[] }>("dump_presets_read")).presets.length).toBe(3);
  });

  it("ccmsg dump prints the path and counts, or the reply with --json", async () => {
    const run = promisify(execFile);
    const env = childEnv({ ...inst.env, CCMSG_STATE_DIR: inst.stateDir });
    const text = await run(
      process.execPath,
      [CLI, "dump", SID, "--types", "tool,-tool:Read", "--text"],
      { env },
    );
    const [path, summary, ...rows] = text.stdout.trim().split("\n");
    expect(path).toMatch(new RegExp(`^${join(inst.stateDir, "dumps")}/${SID}-.*\\.json$`));
    expect(summary).toMatch(/^\d+ item\(s\), \d+ bytes$/);
    expect(rows.some((l) => /^\s+2\s+tool:Agent$/.test(l))).toBe(true);
    const negative = await run(
      process.execPath,
      [CLI, "dump", SID, "--types", "-thinking,-tool", "--json"],
      { env },
    );
    const counts = (JSON.parse(negative.stdout) as { entries: Record<string, number> }).entries;
    expect(Object.keys(counts).some((t) => t === "thinking" || t.startsWith("tool:"))).toBe(false);
    expect(counts["message:user:in"]).toBe(1);
    const json = await run(process.execPath, [CLI, "dump", SID, "--agent", AGENT, "--json"], {
      env,
    });
    const reply = JSON.parse(json.stdout) as { path: string; entries: Record<string, number> };
    expect(reply.entries).toEqual({ "message:user:in": 1, "tool:Grep": 2, "message:user:out": 1 });
    const file = JSON.parse(readFileSync(reply.path, "utf8")) as { agent_id: string };
    expect(file.agent_id).toBe(AGENT);
    const bad = await run(process.execPath, [CLI, "dump", newSid(), "--json"], { env }).catch(
      (e: { stderr: string; code: number }) => e,
    );
    expect((bad as { code: number }).code).toBe(1);
    expect(JSON.parse((bad as { stderr: string }).stderr).error.code).toBe("not_found");
  });
});

describe("a Codex instance", () => {
  it("reads rollouts as typed items, each record named by its offset", async () => {
    const { root, env } = isolatedHome();
    const codexHome = join(root, "codex");
    cpSync(join(FIX, "codex", "codex-home"), codexHome, { recursive: true });
    const thread = newSid();
    const day = join(codexHome, "sessions", "2026", "11", "30");
    writeFileSync(
      join(day, `rollout-2026-11-30T12-00-00-${thread}.jsonl`),
      [...codexTurn(0, thread), ...codexTurn(1, thread), ...codexExtras()]
        .map((l) => `${l}\n`)
        .join(""),
    );
    const codex = await startInstance({
      env: { ...env, CODEX_HOME: codexHome, CODEX_THREAD_ID: thread },
    });
    try {
      const p = await Peer.unix(codex.socket);
      peers.push(p);
      await p.helloUser();
      const fixture = await p.call<Slice>("transcript_items_read", {
        sid: "019a2d7a-41c4-78b1-b7cc-a45d62a89cd5",
      });
      expect(fixture.items.map((i) => i.type)).toEqual([
        "message:user:in",
        "thinking",
        "tool:shell",
        "tool:shell",
        "message:user:out",
      ]);
      const r = await p.call<Slice>("transcript_items_read", { sid: thread });
      expect(r.items.every((i) => /^@\d+$/.test(i.uuid) && i.id.startsWith(`${i.uuid}:`))).toBe(
        true,
      );
      expect(r.items.filter((i) => i.type === "message:session:in").map((i) => i.text)).toEqual([
        "from codex",
      ]);
      const again = await p.call<Slice>("transcript_items_read", {
        sid: thread,
        since_id: r.items[3]!.id,
      });
      expect(again.items).toEqual(r.items.slice(3));
    } finally {
      await codex.stop();
    }
  });
});
