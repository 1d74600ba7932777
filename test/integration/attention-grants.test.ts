import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type {
  AttentionDecideResult,
  AttentionGrant,
  AttentionItem,
  AttentionReadResult,
} from "../../src/contract/attention.js";
import { http } from "../helpers/http.js";
import {
  isolatedHome,
  runCli,
  sharedInstance,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";
import { startMesh, type TestMesh } from "../helpers/mesh.js";
import { newSid, Peer } from "../helpers/peer.js";
import { hookPayload, postHook } from "../helpers/permission-hook.js";
import { until } from "../helpers/real-claude.js";

// The attention queue's grants, the person at the terminal, its record in
// search, and answers across the mesh (DR-0062): a real instance (and two
// linked ones), PermissionRequest and UserPromptSubmit posted to the hook
// route as Claude Code posts them, answered with ccmsg attention.

const shared = sharedInstance();
const fixture = hookPayload;
/** A Bash prompt of session `sid` asking to run `command`. */
const bashPrompt = (sid: string, command = "echo ran > ran.txt") =>
  fixture("permission-request-bash.json", sid, {
    tool_input: { command, description: "write a file" },
  });

/** Post a hook as Claude Code does; it must be answered 200. */
async function hook(inst: TestInstance, payload: Record<string, unknown>): Promise<unknown> {
  const { status, body } = await postHook(inst.http, inst.stateDir, payload);
  expect(status).toBe(200);
  return body;
}

async function cli(args: string[], env: NodeJS.ProcessEnv) {
  const r = await runCli([...args, "--json"], env);
  return { ...r, json: r.code === 0 ? (JSON.parse(r.stdout) as unknown) : undefined };
}

async function listed(env: NodeJS.ProcessEnv, extra: string[] = []): Promise<AttentionReadResult> {
  const r = await cli(["attention", "--all", ...extra], env);
  expect(r.code, r.stderr).toBe(0);
  return r.json as AttentionReadResult;
}

function pendingOf(env: NodeJS.ProcessEnv, sid: string): Promise<AttentionItem> {
  return until("the item", async () =>
    (await listed(env)).items.find((i) => i.sid === sid && i.end === undefined),
  );
}

describe("attention grants (DR-0062)", () => {
  it("refuse a session until the person grants it; then it decides others' prompts, never its own; revoked, refused again", async () => {
    const { env } = shared;
    const [coordinator, worker] = [newSid(), newSid()];
    const asCoordinator = ["--sid", coordinator];

    const before = await cli(["attention", ...asCoordinator], env);
    expect(before.code).not.toBe(0);
    expect(before.stderr).toContain("forbidden");

    const answer = hook(shared.inst, bashPrompt(worker));
    const item = await pendingOf(env, worker);
    const refused = await cli(["attention", "allow", String(item.id), ...asCoordinator], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("forbidden");

    // The person grants it; the grant is there to see.
    const granted = await cli(["attention", "grant", coordinator], env);
    expect(granted.code, granted.stderr).toBe(0);
    const grants = (await cli(["attention", "grants"], env)).json as { grants: AttentionGrant[] };
    expect(grants.grants.map((g) => g.sid)).toContain(coordinator);
    const text = await runCli(["attention", "grants", "--text"], env);
    expect(text.stdout).toContain(coordinator);
    // A session may not grant (itself or anyone).
    const selfGrant = await cli(["attention", "grant", newSid(), ...asCoordinator], env);
    expect(selfGrant.stderr).toContain("forbidden");

    const decided = await cli(["attention", "allow", String(item.id), ...asCoordinator], env);
    expect(decided.code, decided.stderr).toBe(0);
    expect((decided.json as AttentionDecideResult).item).toMatchObject({
      end: "allowed",
      decided_by: { role: "session", sid: coordinator, via: "cli" },
    });
    expect(await answer).toMatchObject({
      hookSpecificOutput: { decision: { behavior: "allow" } },
    });

    // Its own prompt stays the person's, grant or not.
    const own = hook(shared.inst, bashPrompt(coordinator));
    const ownItem = await pendingOf(env, coordinator);
    const laundering = await cli(["attention", "allow", String(ownItem.id), ...asCoordinator], env);
    expect(laundering.code).not.toBe(0);
    expect(laundering.stderr).toContain("forbidden");
    expect(laundering.stderr).toContain("its own prompt");

    const revoked = await cli(["attention", "revoke", coordinator], env);
    expect(revoked.json).toEqual({ revoked: true });
    const after = await cli(["attention", ...asCoordinator], env);
    expect(after.stderr).toContain("forbidden");
    const none = (await cli(["attention", "grants"], env)).json as { grants: AttentionGrant[] };
    expect(none.grants.map((g) => g.sid)).not.toContain(coordinator);

    // The person answers the one left.
    expect((await cli(["attention", "deny", String(ownItem.id)], env)).code).toBe(0);
    expect(await own).toMatchObject({ hookSpecificOutput: { decision: { behavior: "deny" } } });
  });

  it("falls through at once while the person types at the terminal", async () => {
    const sid = newSid();
    // A prompt submitted at the terminal: the person is there.
    await hook(shared.inst, fixture("user-prompt-submit.json", sid));
    expect(await hook(shared.inst, bashPrompt(sid))).toEqual({});
    const [item] = (await listed(shared.env)).items.filter((i) => i.sid === sid);
    expect(item).toMatchObject({ end: "at_terminal" });
    const late = await cli(["attention", "allow", String(item!.id)], shared.env);
    expect(late.code).toBe(1);
    expect((late.json ?? JSON.parse(late.stdout)) as AttentionDecideResult).toMatchObject({
      outcome: "refused",
      reason: "the person was at the terminal: it is answered there",
    });
  });

  it("holds it all the same with the config's window off (attention.at_terminal_seconds: 0)", async () => {
    const home = isolatedHome();
    const dir = join(home.env.XDG_CONFIG_HOME!, "ccmsg");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "config.json"),
      JSON.stringify({ attention: { at_terminal_seconds: 0 } }),
    );
    const inst = await startInstance({ env: { ...home.env, CCMSG_TEST_ATTENTION_HOLD_MS: "300" } });
    try {
      const sid = newSid();
      await hook(inst, fixture("user-prompt-submit.json", sid));
      expect(await hook(inst, bashPrompt(sid))).toEqual({});
      const [item] = (await listed(inst.env)).items.filter((i) => i.sid === sid);
      expect(item?.end).toBe("timed_out");
    } finally {
      await inst.stop();
    }
  });

  it("keeps every request and decision searchable by tool and command", async () => {
    const sid = newSid();
    const answer = hook(shared.inst, bashPrompt(sid, "terraform apply wombatcluster"));
    const item = await pendingOf(shared.env, sid);
    await cli(["attention", "deny", String(item.id), "--message", "not on a friday"], shared.env);
    await answer;
    const hit = await until("the search hit", async () => {
      const r = await cli(["search", "wombatcluster"], shared.env);
      const hits = (r.json as { hits: { sid: string; type: string; snippet: string }[] }).hits;
      return hits.find((h) => h.sid === sid);
    });
    expect(hit.type).toBe("attention:permission");
    expect(hit.snippet).toContain("denied");
    const byTool = await cli(["search", "Bash wombatcluster denied friday"], shared.env);
    expect((byTool.json as { hits: { sid: string }[] }).hits.some((h) => h.sid === sid)).toBe(true);
  });
});

describe("attention across the mesh (DR-0062)", () => {
  let mesh: TestMesh;
  let A: TestInstance;
  let C: TestInstance;
  let idOf: (i: TestInstance) => Promise<string>;
  beforeAll(async () => {
    mesh = await startMesh(2);
    await mesh.waitLinked();
    [A, C] = mesh.instances as [TestInstance, TestInstance];
    idOf = async (i) => {
      const p = await Peer.unix(i.socket);
      const hello = (await p.helloUser()) as { instance: string };
      p.client.close();
      return hello.instance;
    };
  }, 60_000);
  afterAll(() => mesh.stop());

  it("lists a peer's pending items and forwards a decision to the instance that holds it, re-authorised there", async () => {
    const [envA, envC] = [mesh.env(0), mesh.env(1)];
    const [idA, idC] = [await idOf(A), await idOf(C)];
    const sid = newSid();
    const answer = hook(C, bashPrompt(sid));
    const item = await pendingOf(envA, sid);
    expect(item.instance).toBe(idC);
    const text = await runCli(["attention", "--text"], envA);
    expect(text.stdout).toContain(`#${item.id}@${idC.slice(0, 8)}`);

    // A session on A, not granted: C itself refuses it.
    const coordinator = newSid();
    const s = await Peer.unix(A.socket);
    await s.helloSession(coordinator);
    const decide = { to_instance: idC, sid, id: item.id, behavior: "allow" };
    expect((await s.request("attention_decide", decide)).error).toMatchObject({
      code: "forbidden",
    });
    // Granted on A: the grant reaches C with KV, and C lets it decide.
    expect((await cli(["attention", "grant", coordinator], envA)).code).toBe(0);
    await until("the grant on C", async () =>
      ((await cli(["attention", "grants"], envC)).json as { grants: AttentionGrant[] }).grants.find(
        (g) => g.sid === coordinator,
      ),
    );
    const r = (await s.call("attention_decide", decide)) as AttentionDecideResult;
    expect(r.item).toMatchObject({
      end: "allowed",
      instance: idC,
      decided_by: { role: "session", sid: coordinator, instance: idA },
    });
    expect(await answer).toMatchObject({ hookSpecificOutput: { decision: { behavior: "allow" } } });
    s.client.close();

    // The person on A answers the next through the CLI.
    const next = newSid();
    const second = hook(C, bashPrompt(next));
    const other = await pendingOf(envA, next);
    const denied = await cli(
      ["attention", "deny", String(other.id), "--instance", idC.slice(0, 8), "--message", "no"],
      envA,
    );
    expect(denied.code, denied.stderr).toBe(0);
    expect((denied.json as AttentionDecideResult).item.decided_by).toMatchObject({
      role: "user",
      instance: idA,
    });
    expect(await second).toMatchObject({
      hookSpecificOutput: { decision: { behavior: "deny", message: "no" } },
    });
  });

  it("the HTTP API reads the mesh's items and decides one on the instance that holds it", async () => {
    const idC = await idOf(C);
    const sid = newSid();
    const answer = hook(C, bashPrompt(sid));
    const item = await pendingOf(mesh.env(0), sid);
    const page = await http(A.http, "GET", "/api/attention?scope=mesh&pending=1");
    expect(page.status).toBe(200);
    expect((page.body as unknown as AttentionReadResult).items).toContainEqual(
      expect.objectContaining({ id: item.id, sid, instance: idC }),
    );
    // Without scope, A's own items only.
    const local = (await http(A.http, "GET", "/api/attention?pending=1"))
      .body as unknown as AttentionReadResult;
    expect(local.items.filter((i) => i.sid === sid)).toEqual([]);
    const r = await http(A.http, "POST", `/api/attention/${item.id}/decide`, {
      ...{ sid, behavior: "deny", message: "later", instance: idC },
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      ok: true,
      outcome: "decided",
      item: { end: "denied", instance: idC, decided_by: { role: "user", via: "api" } },
    });
    expect(await answer).toMatchObject({
      hookSpecificOutput: { decision: { behavior: "deny", message: "later" } },
    });
  });

  it("answers instance_unreachable for an item of an instance out of reach", async () => {
    const envA = mesh.env(0);
    const idC = await idOf(C);
    const sid = newSid();
    void hook(C, bashPrompt(sid)).catch(() => undefined);
    const item = await pendingOf(envA, sid);
    mesh.isolate(1);
    try {
      const p = await Peer.unix(A.socket);
      await p.helloUser();
      await until("the link down", async () =>
        (await mesh.list(0)).peers.every((l) => l.linked_since === undefined) ? true : undefined,
      );
      const r = await p.request("attention_decide", {
        to_instance: idC,
        sid,
        id: item.id,
        behavior: "allow",
      });
      expect(r.error).toMatchObject({ code: "instance_unreachable" });
      const listing = await listed(envA);
      expect(listing.unread).toEqual([{ instance: idC, reason: expect.any(String) }]);
      const cliTry = await cli(["attention", "allow", String(item.id)], envA);
      expect(cliTry.code).not.toBe(0);
      expect(cliTry.stderr).toContain("instance_unreachable");
      // The HTTP API says the same, 502, and names the instance unread.
      const api = await http(A.http, "POST", `/api/attention/${item.id}/decide`, {
        sid,
        behavior: "allow",
        instance: idC,
      });
      expect(api.status).toBe(502);
      expect(api.body).toMatchObject({ ok: false, code: "instance_unreachable" });
      const page = await http(A.http, "GET", "/api/attention?scope=mesh");
      expect(page.body).toMatchObject({ ok: true, unread: [{ instance: idC }] });
      p.client.close();
    } finally {
      mesh.heal();
    }
  });
});
