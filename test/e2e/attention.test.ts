import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requiredPath } from "../helpers/env.js";
import { http } from "../helpers/http.js";
import { ROOT, startInstance, type TestInstance } from "../helpers/instance.js";
import { startMesh } from "../helpers/mesh.js";
import { newSid, Peer } from "../helpers/peer.js";
import { permissionPrompt, postHook } from "../helpers/permission-hook.js";
import { axe, openConsole, type PageGlobals, sharedBrowser, viewUrl } from "./browser.js";

// Issue 27 in real headless Chromium against a real instance: a permission
// prompt posted to the hook route as Claude Code 2.1.328 posts it shows in
// the console's Needs-you list (and its count in the header of every view);
// what the person clicks there is what the held hook answers; a question is
// answered option by option; a late decision is shown refused; the
// session's timeline tells what was asked and how it ended.

const b = sharedBrowser();
let inst: TestInstance;
let session: Peer;
// A session with a transcript (what the real Claude Code wrote), so its page
// has a timeline to place the items in.
const FIXTURE = join(ROOT, "test/fixtures/claude-code/transcripts/2.1.328-peer-messages.jsonl");
const SID = "3d04d386-4f18-4430-90a2-ec907a6d2f91";
const LABEL = "review: claims";

beforeAll(async () => {
  inst = await startInstance();
  const projects = join(requiredPath(inst.env, "CLAUDE_CONFIG_DIR"), "projects", "-tmp-work");
  mkdirSync(projects, { recursive: true });
  copyFileSync(FIXTURE, join(projects, `${SID}.jsonl`));
  session = await Peer.unix(inst.socket);
  await session.helloSession(SID, { title: LABEL, repo: "acme/widgets", cwd: "/tmp/work" });
});

afterAll(async () => {
  session?.close();
  await inst?.stop();
});

/** The hook's POST, as Claude Code sends it; its answer when it comes. */
function ask(name: "bash" | "question") {
  return postHook(inst.http, inst.stateDir, permissionPrompt(name, SID)).then((r) => {
    expect(r.status).toBe(200);
    return r.body as { hookSpecificOutput?: { decision: Record<string, unknown> } };
  });
}

/** A browser that grants notifications and records each one shown. */
async function recordingContext(width: number, height: number): Promise<BrowserContext> {
  const context = await b.browser.newContext({ viewport: { width, height } });
  await context.addInitScript(() => {
    const shown: { title: string; body?: string }[] = [];
    class Recorded {
      static permission = "granted";
      static requestPermission = async () => "granted";
      onclick: (() => void) | null = null;
      constructor(title: string, options?: { body?: string }) {
        shown.push({ title, body: options?.body });
      }
    }
    Object.assign(globalThis, { Notification: Recorded, shownNotifications: shown });
  });
  return context;
}

function shownNotifications(page: Page): Promise<{ title: string; body?: string }[]> {
  return page.evaluate(
    () =>
      (globalThis as unknown as { shownNotifications: { title: string; body?: string }[] })
        .shownNotifications,
  );
}

describe("Needs you, in the console", () => {
  let context: BrowserContext;
  let page: Page;
  let firstId: string;

  it("shows a new prompt from any view (count, browser notification), then Allow answers the hook", async () => {
    context = await recordingContext(1280, 860);
    ({ page } = await openConsole(b.browser, inst, { context }));
    await page.waitForSelector(`[data-sid="${SID}"]`);
    const reply = ask("bash");
    // On the sessions view: the header counts it, a notification names it.
    await page.waitForSelector("nav [data-attention-count='1']");
    await expect
      .poll(async () => (await shownNotifications(page)).map((n) => n.title))
      .toEqual([`Needs you: ${LABEL}`]);
    expect((await shownNotifications(page))[0]!.body).toContain("asks to run Bash");

    await page.click("nav a:has-text('Needs you')");
    const item = page.locator(".att-list:not(.att-ended) .att-item");
    await item.waitFor();
    firstId = (await item.getAttribute("data-attention"))!;
    expect(await item.locator(".att-session").textContent()).toBe(LABEL);
    expect(await item.locator(".att-input").textContent()).toContain(
      "echo ran > /tmp/perm-probe/run-6UO5lA/cwd/ran.txt",
    );
    expect(await item.locator(".att-cwd").textContent()).toContain(
      "/tmp/perm-probe/run-6UO5lA/cwd",
    );
    expect(await item.textContent()).toContain("this instance");
    // The harness offered a suggestion: "always" is there, and says what.
    expect(await item.locator(".att-always").textContent()).toContain(
      "access to /tmp/perm-probe/run-6UO5lA/cwd (session)",
    );
    expect(await axe(page)).toEqual([]);

    await item.locator("[data-decide='allow']").click();
    expect(await reply).toEqual({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } },
    });
    const done = page.locator(`.att-ended [data-attention='${firstId}']`);
    await done.waitFor();
    expect(await done.getAttribute("data-end")).toBe("allowed");
    expect(await done.textContent()).toContain("allowed by you from the console");
    await page.waitForSelector("nav [data-attention-count]", { state: "detached" });
  });

  it("shows a decision that came second as refused, with the reason", async () => {
    const late = await http(inst.http, "POST", `api/attention/${firstId}/decide`, {
      sid: SID,
      behavior: "deny",
    });
    expect(late.status).toBe(409);
    const refusal = page.locator(`.att-ended [data-attention='${firstId}'] .att-refusal`);
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe(
      "A later deny from the api was refused: already allowed from the console",
    );
  });

  it("Deny with a message: the hook answers deny and the message", async () => {
    const reply = ask("bash");
    const item = page.locator(".att-list:not(.att-ended) .att-item");
    await item.waitFor();
    await item.locator("input[type='text']").fill("use the staging bucket");
    await item.locator("[data-decide='deny']").click();
    expect(await reply).toEqual({
      hookSpecificOutput: {
        hookEventName: "PermissionRequest",
        decision: { behavior: "deny", message: "use the staging bucket" },
      },
    });
    await page
      .locator(".att-ended [data-end='denied']", { hasText: "use the staging bucket" })
      .waitFor();
  });

  it("answers a question with the chosen option", async () => {
    const reply = ask("question");
    const item = page.locator(".att-list:not(.att-ended) .att-item[data-kind='question']");
    await item.waitFor();
    const answer = item.locator("[data-decide='answer']");
    // Nothing chosen yet: nothing to send.
    expect(await answer.isDisabled()).toBe(true);
    expect(await item.locator("[data-decide='always']").count()).toBe(0);
    await item.getByLabel("Blue").check();
    await answer.click();
    const decision = (await reply).hookSpecificOutput?.decision;
    expect(decision).toMatchObject({
      behavior: "allow",
      updatedInput: { answers: { "Which color should the button be?": "Blue" } },
    });
    const done = page.locator(".att-ended [data-end='allowed'] .att-answers");
    await done.waitFor();
    expect(await done.textContent()).toBe("Which color should the button be? → Blue");
  });

  it("puts what was asked, and how it ended, in the session's timeline", async () => {
    await page.goto(viewUrl(page, `#/session/${SID}`));
    const rows = page.locator(".timeline .titem.attention");
    await expect.poll(() => rows.count()).toBe(3);
    const first = page.locator(`.timeline .titem.attention[data-attention='${firstId}']`);
    expect(await first.textContent()).toContain("asked to run Bash");
    expect(await first.textContent()).toContain("allowed by you from the console");
    await page
      .locator(".timeline .titem.attention[data-end='denied']", {
        hasText: "use the staging bucket",
      })
      .waitFor();
    // Asked after everything in the transcript: the last rows.
    const last = page.locator(".timeline .titem").last();
    expect(await last.getAttribute("data-end")).toBe("allowed");
    expect(await last.textContent()).toContain("asked you a question");
    await context.close();
  });

  it("keeps to a phone's width (375 px) with a prompt waiting", async () => {
    const reply = ask("bash");
    const { context: phone, page: small } = await openConsole(b.browser, inst, {
      width: 375,
      height: 812,
    });
    await small.goto(viewUrl(small, "#/attention"));
    const item = small.locator(".att-list:not(.att-ended) .att-item");
    await item.waitFor();
    for (const view of ["#/attention", `#/session/${SID}`, "#/"]) {
      await small.goto(viewUrl(small, view));
      await small.waitForSelector("main .view");
      if (view === "#/attention") await item.waitFor();
      const width = await small.evaluate(() => {
        const root = (globalThis as unknown as PageGlobals).document.documentElement;
        return { scroll: root.scrollWidth, client: root.clientWidth };
      });
      expect({ view, ...width }).toEqual({ view, scroll: width.client, client: width.client });
    }
    await small.goto(viewUrl(small, "#/attention"));
    await item.waitFor();
    // Every control within the screen, none cut.
    for (const control of ["[data-decide='allow']", "[data-decide='deny']", "input[type='text']"]) {
      const box = (await item.locator(control).boundingBox())!;
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(375);
    }
    expect(await axe(small)).toEqual([]);
    await item.locator("[data-decide='allow']").click();
    expect((await reply).hookSpecificOutput?.decision).toEqual({ behavior: "allow" });
    await phone.close();
  });
});

describe("Needs you across the mesh", () => {
  it("lists a linked instance's prompt and Deny there answers its hook", async () => {
    const mesh = await startMesh(2);
    await mesh.waitLinked();
    const [A, C] = mesh.instances as [TestInstance, TestInstance];
    const remote = newSid();
    const reply = postHook(C.http, C.stateDir, permissionPrompt("bash", remote));
    const { context, page } = await openConsole(b.browser, A);
    try {
      await page.goto(viewUrl(page, "#/attention"));
      // Read across the mesh every few seconds: C's item, named as C's.
      const item = page.locator(`.att-list:not(.att-ended) .att-item`);
      await item.waitFor({ timeout: 15_000 });
      const idC = (await item.getAttribute("data-instance"))!;
      expect(await item.textContent()).toContain(`instance ${idC.slice(0, 8)}`);
      expect(await item.textContent()).not.toContain("this instance");
      await item.locator("input[type='text']").fill("ask on the channel first");
      await item.locator("[data-decide='deny']").click();
      expect((await reply).body).toEqual({
        hookSpecificOutput: {
          hookEventName: "PermissionRequest",
          decision: { behavior: "deny", message: "ask on the channel first" },
        },
      });
      const done = page.locator(`.att-ended [data-instance='${idC}']`);
      await done.waitFor();
      expect(await done.getAttribute("data-end")).toBe("denied");
      expect(await done.textContent()).toContain("denied by you from the console on instance");
    } finally {
      await context.close();
      await mesh.stop();
    }
  }, 60_000);
});
