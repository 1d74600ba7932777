import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { parse as parseToml } from "smol-toml";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadOrMintHookToken } from "../../src/state/hook-token.js";
import { CLI, childEnv, runCli, startInstance, type TestInstance } from "../helpers/instance.js";
import { MCP_INITIALIZE } from "../helpers/mcp.js";
import { contractViolations, newSid, Peer } from "../helpers/peer.js";
import { until } from "../helpers/real-claude.js";

// `ccmsg mcp` driven by the SDK's own client over stdio, as a harness runs
// it: a real instance in a temp state dir, the server spawned with the
// environment of a session.

afterEach(() => expect(contractViolations.splice(0)).toEqual([]));

let inst: TestInstance;
let env: Record<string, string>;
const clients: McpClient[] = [];

beforeAll(async () => {
  inst = await startInstance();
  env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
});

afterAll(async () => {
  for (const c of clients) await c.close();
  await inst.stop();
});

/** An MCP client whose server runs as `sid` (none: as nobody). */
async function serverAs(sid: string | undefined): Promise<McpClient> {
  const client = new McpClient({ name: "test-harness", version: "0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp"],
    env: { ...env, ...(sid === undefined ? {} : { CLAUDE_CODE_SESSION_ID: sid }) },
    stderr: "pipe",
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

type ToolResult = { isError?: boolean; content: { type: string; text: string }[] };

async function call(client: McpClient, name: string, args: Record<string, unknown> = {}) {
  const r = (await client.callTool({ name, arguments: args })) as ToolResult;
  return { isError: r.isError === true, text: r.content[0]!.text };
}

describe("ccmsg mcp", () => {
  it("initializes and lists its tools with small object schemas", async () => {
    const client = await serverAs(newSid());
    expect(client.getServerVersion()?.name).toBe("ccmsg");
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "attention",
        "board_claim",
        "board_list",
        "board_move",
        "hud",
        "inbox",
        "kv_get",
        "kv_set",
        "notify",
        "peers",
        "release",
        "reply",
        "reserve",
        "send",
        "status",
      ].sort(),
    );
    for (const t of tools) {
      expect(t.inputSchema.type).toBe("object");
      expect(t.description!.length).toBeLessThanOrEqual(160);
    }
    // Every session pays for the list in its context: keep it cheap.
    expect(JSON.stringify(tools).length).toBeLessThan(4000);
  });

  it("send from session A reaches listening session B, and says delivered", async () => {
    const [A, B] = [newSid(), newSid()];
    const b = await Peer.unix(inst.socket);
    await b.helloSession(B);
    await b.subscribe("inbox");
    const arrival = b.next((f) => f.topic === "inbox" && !f.snapshot);
    const a = await serverAs(A);
    const r = await call(a, "send", { to: B, text: "tests are green" });
    expect(r).toEqual({ isError: false, text: JSON.stringify({ delivered: true }) });
    const [m] = (await arrival).data as { from: string; text: string }[];
    expect(m).toMatchObject({ from: A, text: "tests are green" });
    b.client.close();
  });

  it("send and reply take a prefix of the recipient's id or its @title; an ambiguous one lists the candidates", async () => {
    const [A, B] = [newSid(), newSid()];
    const b = await Peer.unix(inst.socket);
    await b.helloSession(B, { title: "mcp-beta" });
    await b.subscribe("inbox");
    const a = await serverAs(A);
    for (const [tool, to] of [
      ["send", B.slice(0, 8)],
      ["reply", "@mcp-beta"],
    ] as const) {
      const arrival = b.next((f) => f.topic === "inbox" && !f.snapshot);
      const args = tool === "send" ? { to, text: to } : { to, text: to, mid: `${inst.id}/1` };
      expect(await call(a, tool, args)).toEqual({
        isError: false,
        text: JSON.stringify({ delivered: true }),
      });
      expect(((await arrival).data as { text: string }[])[0]).toMatchObject({ from: A, text: to });
    }
    // Two sessions whose ids begin alike.
    const twins = ["0", "f"].map((c) => `9e9e9e${c}${newSid().slice(7)}`);
    const peers = await Promise.all(twins.map(() => Peer.unix(inst.socket)));
    await Promise.all(peers.map((p, i) => p.helloSession(twins[i]!)));
    const r = await call(a, "send", { to: "9e9e9e", text: "which?" });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^invalid_args: the recipient \(to\) "9e9e9e" matches 2 sessions/);
    for (const sid of twins) expect(r.text).toContain(sid.slice(0, 8));
    for (const p of [b, ...peers]) p.client.close();
  });

  it("send to a sid nobody knows is a tool error carrying session_not_found", async () => {
    const a = await serverAs(newSid());
    const r = await call(a, "send", { to: newSid(), text: "anyone?" });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^session_not_found: /);
  });

  it("arguments that fail the tool's schema are invalid_args, and the server carries on", async () => {
    const a = await serverAs(newSid());
    const r = await call(a, "send", { to: 42 });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/^invalid_args: /);
    expect((await call(a, "peers")).isError).toBe(false);
  });

  it("inbox returns what was held for the session, once", async () => {
    const [A, B] = [newSid(), newSid()];
    const b = await serverAs(B);
    // B's server connects as B on its first call; B is then known, not listening.
    const peers = JSON.parse((await call(b, "peers")).text) as { peers: { sid: string }[] };
    expect(peers.peers.map((p) => p.sid)).toContain(B);
    const a = await Peer.unix(inst.socket);
    await a.helloSession(A);
    expect(await a.call("message_send", { to: B, text: "review my branch" })).toEqual({
      delivered: false,
      reason: "preparing",
    });
    const first = JSON.parse((await call(b, "inbox")).text) as {
      messages: { mid: string; from: string; text: string }[];
    };
    expect(first.messages).toHaveLength(1);
    expect(first.messages[0]).toMatchObject({ from: A, text: "review my branch" });
    // Taken means delivered: nothing is handed over twice.
    expect(JSON.parse((await call(b, "inbox")).text)).toEqual({ messages: [] });
    // Once the inbox tool is done B no longer listens: a new message is held again.
    expect(await a.call("message_send", { to: B, text: "ping" })).toEqual({
      delivered: false,
      reason: "preparing",
    });
    a.client.close();
  });

  it("reserve and release: a second session's overlapping reservation is a file_conflict naming the first", async () => {
    const [A, B] = [newSid(), newSid()];
    const dir = join(inst.env.HOME!, "mcp-reserve");
    const a = await serverAs(A);
    const b = await serverAs(B);
    const mine = await call(a, "reserve", { globs: [`${dir}/src/**`], for: "30m", reason: "mcp" });
    expect(mine.isError, mine.text).toBe(false);
    expect(JSON.parse(mine.text).reserved).toEqual([
      { glob: `${dir}/src/**`, expires_at: expect.any(Number) },
    ]);
    const theirs = await call(b, "reserve", { globs: [`${dir}/src/a.ts`], for: "5m" });
    expect(theirs.isError).toBe(true);
    expect(theirs.text).toMatch(/^file_conflict: already reserved:/);
    expect(theirs.text).toContain(`session ${A}`);
    expect(JSON.parse((await call(a, "release", {})).text)).toEqual({
      released: [`${dir}/src/**`],
    });
    expect((await call(b, "reserve", { globs: [`${dir}/src/a.ts`], for: "5m" })).isError).toBe(
      false,
    );
    expect((await call(b, "reserve", { globs: ["x"], for: "soon" })).text).toMatch(
      /^invalid_args: /,
    );
  });

  it("reply without to reaches the person as a notification about the session", async () => {
    const A = newSid();
    const person = await Peer.unix(inst.socket);
    await person.helloUser();
    await person.call("topic_subscribe", { topic: "notify" });
    const note = person.next((f) => f.topic === "notify");
    const a = await serverAs(A);
    expect(await call(a, "reply", { mid: `${inst.id}/1`, text: "on it" })).toEqual({
      isError: false,
      text: JSON.stringify({ notified: true }),
    });
    expect((await note).data).toMatchObject({ sid: A, text: "on it" });
    person.client.close();
  });

  it("tools that act as a session refuse when the server knows none", async () => {
    const nobody = await serverAs(undefined);
    for (const [name, args] of [
      ["send", { to: newSid(), text: "hi" }],
      ["notify", { text: "done" }],
      ["inbox", {}],
    ] as const) {
      const r = await call(nobody, name, args);
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/^invalid_args: .*acts as a session/);
    }
  });

  it("attention: refused until the person grants the session; then it decides another session's prompt", async () => {
    const sid = newSid();
    const a = await serverAs(sid);
    const before = await call(a, "attention");
    expect(before.isError).toBe(true);
    expect(before.text).toMatch(/^forbidden: /);
    // Nor may it grant itself through the person's KV.
    const self = await call(a, "kv_set", { ns: "attention_grants", key: sid, value: { sid } });
    expect(self.text).toMatch(/^forbidden: /);

    expect((await runCli(["attention", "grant", sid], env)).code).toBe(0);
    const other = newSid();
    const prompt = fetch(new URL("/hooks/claude", inst.http), {
      method: "POST",
      headers: {
        authorization: `Bearer ${loadOrMintHookToken(inst.stateDir)}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({
        hook_event_name: "PermissionRequest",
        session_id: other,
        cwd: "/tmp",
        tool_name: "Bash",
        tool_input: { command: "make deploy" },
      }),
    }).then((r) => r.json());
    const item = await until("the item", async () => {
      const listed = JSON.parse((await call(a, "attention")).text) as {
        items: { item: string; tool: string; input: string }[];
      };
      return listed.items.find((i) => i.input.includes("make deploy"));
    });
    expect(item.tool).toBe("Bash");
    const r = await call(a, "attention", { item: item.item, allow: false, why: "not now" });
    expect(JSON.parse(r.text)).toEqual({ outcome: "decided", end: "denied" });
    expect(await prompt).toMatchObject({
      hookSpecificOutput: { decision: { behavior: "deny", message: "not now" } },
    });
    await runCli(["attention", "revoke", sid], env);
  });

  it("kv_set then kv_get", async () => {
    const a = await serverAs(newSid());
    expect(
      (await call(a, "kv_set", { ns: "notes", key: "plan", value: { step: 2 } })).isError,
    ).toBe(false);
    expect(await call(a, "kv_get", { ns: "notes", key: "plan" })).toEqual({
      isError: false,
      text: JSON.stringify({ step: 2 }),
    });
    const missing = await call(a, "kv_get", { ns: "notes", key: "nothing" });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/^not_found: /);
  });

  it("the board: list shows an added item; claim and move act on it", async () => {
    const added = await runCli(["board", "add", "--title", "Fix the widget", "--json"], env);
    expect(added.code).toBe(0);
    const { item } = JSON.parse(added.stdout) as { item: { id: string } };
    const A = newSid();
    const a = await serverAs(A);
    const list = await call(a, "board_list");
    expect(list.isError).toBe(false);
    expect(list.text).toContain("Fix the widget");
    const claimed = await call(a, "board_claim", { id: item.id });
    expect(claimed.text).toMatch(new RegExp(`^claimed ${item.id} .*— ${A}$`));
    expect((await call(a, "board_move", { id: item.id, lane: "done" })).text).toMatch(
      new RegExp(`^moved ${item.id} +\\[done/done\\]`),
    );
    const lane = await call(a, "board_move", { id: item.id, lane: "sideways" });
    expect(lane.isError).toBe(true);
    expect(lane.text).toMatch(/^invalid_args: /);
  });

  it("ends when the harness closes its stdin, taking the session's connection with it", async () => {
    const sid = newSid();
    const child = spawn(process.execPath, [CLI, "mcp"], {
      env: childEnv({ ...env, CLAUDE_CODE_SESSION_ID: sid }),
      stdio: ["pipe", "pipe", "ignore"],
    });
    const exited = new Promise<number | null>((r) => child.on("exit", r));
    const lines = createInterface({ input: child.stdout! });
    const answers = lines[Symbol.asyncIterator]();
    const send = (m: object) => child.stdin!.write(`${JSON.stringify(m)}\n`);
    send(MCP_INITIALIZE);
    await answers.next();
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "peers", arguments: {} } });
    await answers.next();
    child.stdin!.end();
    expect(await exited).toBe(0);
  });

  it("status and hud answer in text", async () => {
    const a = await serverAs(newSid());
    const status = await call(a, "status");
    expect(status.isError).toBe(false);
    expect(status.text.length).toBeGreaterThan(0);
    const hud = await call(a, "hud");
    expect(hud.isError).toBe(false);
    expect(hud.text.length).toBeGreaterThan(0);
  });
});

describe("ccmsg mcp --print-config", () => {
  it("claude: an .mcp.json document that runs this install's server", async () => {
    const r = await runCli(["mcp", "--print-config", "claude"], env);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      mcpServers: { ccmsg: { type: string; command: string; args: string[] } };
    };
    expect(doc.mcpServers.ccmsg).toEqual({
      type: "stdio",
      command: process.execPath,
      args: [CLI, "mcp", "--state-dir", inst.stateDir],
    });
  });

  it("codex: a config.toml [mcp_servers.ccmsg] table naming the Codex home", async () => {
    const r = await runCli(["mcp", "--print-config", "codex"], {
      ...env,
      CODEX_HOME: "/somewhere/codex",
    });
    expect(r.code).toBe(0);
    const doc = parseToml(r.stdout) as {
      mcp_servers: {
        ccmsg: { command: string; args: string[]; env: Record<string, string>; env_vars: string[] };
      };
    };
    const entry = doc.mcp_servers.ccmsg;
    expect(entry.command).toBe(process.execPath);
    expect(entry.args).toEqual([CLI, "mcp", "--state-dir", inst.stateDir]);
    expect(entry.env).toEqual({ CODEX_HOME: "/somewhere/codex" });
    expect(entry.env_vars).toContain("CODEX_THREAD_ID");
  });

  it("another harness name is refused", async () => {
    const r = await runCli(["mcp", "--print-config", "vim", "--json"], env);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr)).toMatchObject({ error: { code: "invalid_args" } });
  });
});
