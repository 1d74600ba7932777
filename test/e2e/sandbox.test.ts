import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startInstance, type TestInstance } from "../helpers/instance.js";
import { newSid, Peer } from "../helpers/peer.js";
import { openConsole, sharedBrowser } from "./browser.js";

// The sandbox (DR-0042) in real Chromium: a grant's URL on
// `<gid>.sandbox.localhost:<port>` — a name Chromium itself takes as
// loopback — opens the session's file as itself, its relative links load
// through the same token, the console's cookie never goes along, and the
// page runs no script.

const b = sharedBrowser();
const SID = newSid();
let inst: TestInstance;
let person: Peer;
let w: string;

// A 1×1 PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

beforeAll(async () => {
  inst = await startInstance();
  w = mkdtempSync(join(tmpdir(), "ccmsg-sandbox-e2e-"));
  mkdirSync(join(w, "docs", "img"), { recursive: true });
  writeFileSync(
    join(w, "docs", "preview.html"),
    [
      "<!doctype html><meta charset=utf-8><title>Preview</title>",
      '<link rel="stylesheet" href="style.css">',
      '<h1 id="t">Sandboxed preview ✓</h1>',
      '<img id="dot" src="img/dot.png" alt="dot">',
      "<script>document.title = 'script ran'</script>",
    ].join("\n"),
  );
  writeFileSync(join(w, "docs", "style.css"), "h1 { color: rgb(0, 128, 0) }\n");
  writeFileSync(join(w, "docs", "img", "dot.png"), PNG);
  person = await Peer.unix(inst.socket);
  await person.helloUser();
  const own = await Peer.unix(inst.socket);
  await own.helloSession(SID, { cwd: w, repo_root: w });
}, 30_000);

afterAll(async () => {
  person?.close();
  await inst?.stop();
  rmSync(w, { recursive: true, force: true });
});

describe("a grant opened in Chromium", () => {
  it("shows the file as itself on its own origin, with its siblings, and no script", async () => {
    // Signed in to the console first, so its cookie is in the browser.
    const { context, page: consolePage } = await openConsole(b.browser, inst);
    const g = await person.call<{ url: string; gid: string }>("sandbox_grant", {
      sid: SID,
      kind: "contained",
      path: "docs/preview.html",
    });
    const page = await context.newPage();
    const cookies: string[] = [];
    const statuses = new Map<string, number>();
    page.on("request", async (r) => {
      const c = (await r.allHeaders()).cookie;
      if (c !== undefined) cookies.push(`${r.url()}: ${c}`);
    });
    page.on("response", (r) =>
      statuses.set(new URL(r.url()).pathname.split("/").pop()!, r.status()),
    );
    const res = await page.goto(g.url);
    expect(res?.status()).toBe(200);
    expect(new URL(page.url()).hostname).toBe(`${g.gid}.sandbox.localhost`);
    await expect.poll(() => page.textContent("#t")).toBe("Sandboxed preview ✓");
    // The relative stylesheet and image came through the same token.
    await expect
      .poll(() => page.evaluate("getComputedStyle(document.getElementById('t')).color"))
      .toBe("rgb(0, 128, 0)");
    await expect
      .poll(() =>
        page.$eval("#dot", (e) => (e as unknown as { naturalWidth: number }).naturalWidth),
      )
      .toBe(1);
    expect(statuses.get("style.css")).toBe(200);
    expect(statuses.get("dot.png")).toBe(200);
    // CSP sandbox: the file's own script did not run; the page's origin is
    // its grant's, not the console's.
    expect(await page.title()).toBe("Preview");
    expect(await page.evaluate("origin")).toBe(new URL(g.url).origin);
    expect(cookies).toEqual([]);
    // The console in the same browser still works and kept its cookie.
    expect((await context.cookies(consolePage.url())).length).toBeGreaterThan(0);
    await context.close();
  }, 60_000);
});
