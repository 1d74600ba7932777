import { describe, expect, it } from "vitest";
import type { AttentionItem } from "../../src/contract/attention.js";
import { http, ownerHeaders } from "../helpers/http.js";
import { sharedInstance } from "../helpers/instance.js";
import { newSid } from "../helpers/peer.js";
import { permissionPrompt, postHook } from "../helpers/permission-hook.js";
import { until } from "../helpers/real-claude.js";

// The attention queue over HTTP (DR-0062): the person's own tools read it
// and decide with `/api/attention`, behind the same Host, Origin and owner
// checks as every route; a decision reaches the held hook, a second one is
// refused with what won.

const shared = sharedInstance();

/** Until session `sid` has a pending item over the API; it. */
function pendingOf(sid: string): Promise<AttentionItem> {
  return until("the pending item", async () => {
    const r = await http(shared.inst.http, "GET", `api/attention?pending=1&sid=${sid}`);
    expect(r.status).toBe(200);
    return (r.body.items as AttentionItem[])[0];
  });
}

describe("/api/attention", () => {
  it("is the owner's: no credential is 401, a foreign Origin 403", async () => {
    const url = new URL("api/attention", shared.inst.http);
    expect((await fetch(url)).status).toBe(401);
    const foreign = await fetch(url, {
      headers: { ...ownerHeaders(shared.inst.http), origin: "http://evil.example" },
    });
    expect(foreign.status).toBe(403);
    const decide = await fetch(new URL("api/attention/1/decide", shared.inst.http), {
      method: "POST",
      headers: {
        ...ownerHeaders(shared.inst.http),
        origin: "http://evil.example",
        "content-type": "application/json",
      },
      body: JSON.stringify({ sid: newSid(), behavior: "allow" }),
    });
    expect(decide.status).toBe(403);
  });

  it("allows a held prompt: the hook hears it; a second decision is refused with the reason", async () => {
    const sid = newSid();
    const reply = postHook(shared.inst.http, shared.inst.stateDir, permissionPrompt("bash", sid));
    const item = await pendingOf(sid);
    expect(item).toMatchObject({ tool: "Bash", kind: "permission" });

    const r = await http(shared.inst.http, "POST", `api/attention/${item.id}/decide`, {
      sid,
      behavior: "allow",
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      ok: true,
      outcome: "decided",
      item: { end: "allowed", decided_by: { role: "user", via: "api" } },
    });
    expect(await reply).toEqual({
      status: 200,
      body: {
        hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } },
      },
    });

    const late = await http(shared.inst.http, "POST", `api/attention/${item.id}/decide`, {
      sid,
      behavior: "deny",
      message: "no",
    });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({
      ok: false,
      outcome: "refused",
      reason: "already allowed from the api",
      item: { end: "allowed" },
    });
    const listed = await http(shared.inst.http, "GET", `api/attention?sid=${sid}`);
    const kept = (listed.body.items as AttentionItem[]).find((i) => i.id === item.id);
    expect(kept?.refused?.[0]).toMatchObject({ behavior: "deny", by: { via: "api" } });
  });

  it("denies with a message the model receives", async () => {
    const sid = newSid();
    const reply = postHook(shared.inst.http, shared.inst.stateDir, permissionPrompt("bash", sid));
    const item = await pendingOf(sid);
    const r = await http(shared.inst.http, "POST", `api/attention/${item.id}/decide`, {
      sid,
      behavior: "deny",
      message: "not on main",
    });
    expect(r.status).toBe(200);
    expect((await reply).body).toEqual({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "not on main" },
      },
    });
  });

  it("refuses what the contract refuses, with its code", async () => {
    const sid = newSid();
    const unknown = await http(shared.inst.http, "POST", "api/attention/999999/decide", {
      sid,
      behavior: "allow",
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe("not_found");
    const bad = await http(shared.inst.http, "POST", "api/attention/1/decide", {
      sid,
      behavior: "deny",
      always: true,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("invalid_args");
    const noSid = await http(shared.inst.http, "POST", "api/attention/1/decide", {
      behavior: "allow",
    });
    expect(noSid.status).toBe(400);
    const query = await http(shared.inst.http, "GET", "api/attention?sid=nope");
    expect(query.status).toBe(400);
    const form = await fetch(new URL("api/attention/1/decide", shared.inst.http), {
      method: "POST",
      headers: { ...ownerHeaders(shared.inst.http), "content-type": "text/plain" },
      body: JSON.stringify({ sid, behavior: "allow" }),
    });
    expect(form.status).toBe(415);
  });
});
