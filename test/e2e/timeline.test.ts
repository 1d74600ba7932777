import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requiredPath } from "../helpers/env.js";
import { ROOT, type TestInstance } from "../helpers/instance.js";
import { llmInstance } from "../helpers/llm.js";
import { Peer } from "../helpers/peer.js";
import { axe, openConsole, type PageGlobals, sharedBrowser, viewUrl } from "./browser.js";

// Issue 25 in real headless Chromium against a real instance: a session's
// timeline tells the conversation — messages from other sessions as *Message
// in* with the sender's name, the harness's bookkeeping folded into one row
// per run that opens on demand — and the busy mark follows a gateway's report.

const b = sharedBrowser();
let inst: TestInstance;
const sessions: Peer[] = [];
const TOKEN = "tok-timeline-0123456789";
// What the real Claude Code 2.1.328 wrote when ccmsg sent it two messages.
const FIXTURE = join(ROOT, "test/fixtures/claude-code/transcripts/2.1.328-peer-messages.jsonl");
const SID = "3d04d386-4f18-4430-90a2-ec907a6d2f91";
const SENDER = "89b6fb5b-a6e9-420a-832c-229bc902061e";

beforeAll(async () => {
  inst = await llmInstance({ sources: { ext: { token: TOKEN } } });
  const projects = join(requiredPath(inst.env, "CLAUDE_CONFIG_DIR"), "projects", "-tmp-work");
  mkdirSync(projects, { recursive: true });
  copyFileSync(FIXTURE, join(projects, `${SID}.jsonl`));
  for (const [sid, title] of [
    [SID, "review: claims"],
    [SENDER, "api: schema"],
  ] as const) {
    const p = await Peer.unix(inst.socket);
    await p.helloSession(sid, { title, repo: "acme/widgets", ws: "widgets", cwd: "/tmp/work" });
    sessions.push(p);
  }
});

afterAll(async () => {
  for (const p of sessions) p.close();
  await inst?.stop();
});

describe("a session's timeline", () => {
  let page: Page;

  it("shows a message from another session as Message in, with its sender and only its words", async () => {
    ({ page } = await openConsole(b.browser, inst));
    await page.goto(viewUrl(page, `#/session/${SID}`));
    const first = page.locator(".timeline article.msg-in", {
      hasText: "the first message, while idle",
    });
    await first.waitFor();
    expect(await first.locator(".titem-type").textContent()).toBe("Message in");
    expect(await first.locator(".sender").textContent()).toBe("from api: schema");
    // The sender is a session the console knows: its name links to it.
    expect(await first.locator(".sender a").getAttribute("href")).toBe(`#/session/${SENDER}`);
    // The one queued while a command ran, the same way.
    await page
      .locator(".timeline article.msg-in", { hasText: "a second message, mid-turn" })
      .waitFor();
    // Neither the envelope nor Claude Code's advice to its model is shown.
    const shown = (await page.textContent(".timeline")) ?? "";
    expect(shown).not.toContain("cross-session-message");
    expect(shown).not.toContain("permission laundering");
    expect(shown).not.toContain("Caveat");
  });

  it("folds the harness's bookkeeping into one row per run, and opens a run on demand", async () => {
    const runs = page.locator(".timeline .titem.notes");
    await runs.first().waitFor();
    // The fixture: a run after the first message, one after the second.
    expect(await runs.count()).toBe(2);
    const run = runs.nth(1);
    const toggle = run.locator("button.notes-toggle");
    expect(await toggle.textContent()).toMatch(/^▸ 6 harness notes$/);
    expect(await run.textContent()).toContain("deferred tools delta");
    expect(await toggle.getAttribute("aria-expanded")).toBe("false");
    expect(await run.locator("article").count()).toBe(0);
    // The conversation between them stays in sight.
    await page.locator(".timeline article.assistant", { hasText: "noted" }).waitFor();
    await page.locator(".timeline article.tool", { hasText: "sleep 6" }).waitFor();
    expect(await axe(page)).toEqual([]);

    await toggle.click();
    expect(await toggle.getAttribute("aria-expanded")).toBe("true");
    await run.locator("article", { hasText: "Skill_listing" }).waitFor();
    expect(await run.locator(".notes-items > article").count()).toBe(6);
    expect(await axe(page)).toEqual([]);
    await toggle.click();
    await run.locator("article").first().waitFor({ state: "detached" });
  });

  it("keeps to a phone's width with a run opened", async () => {
    const { context, page: phone } = await openConsole(b.browser, inst, {
      width: 375,
      height: 812,
    });
    await phone.goto(viewUrl(page, `#/session/${SID}`));
    await phone.locator(".timeline .titem.notes button").first().click();
    await phone.locator(".timeline .notes-items article").first().waitFor();
    const width = await phone.evaluate(() => {
      const root = (globalThis as unknown as PageGlobals).document.documentElement;
      return { scroll: root.scrollWidth, client: root.clientWidth };
    });
    expect(width.scroll).toBe(width.client);
    expect(await axe(phone)).toEqual([]);
    await context.close();
  });
});

describe("the busy mark", () => {
  it("shows a session as busy while a gateway saw inference run for it just now, as ccmsg peers does", async () => {
    const page = (await openConsole(b.browser, inst)).page;
    // The page's clock runs on as usual; the test moves it past the window's
    // end rather than waiting those seconds out.
    await page.clock.install();
    await page.goto(viewUrl(page, `#/session/${SID}`));
    await page.locator(".session-page h1", { hasText: "review: claims" }).waitFor();
    expect(await page.locator(".session-head [data-busy]").count()).toBe(0);
    // A request the gateway saw start and end 5 s ago: busy for 10 s more.
    const at = Date.now() - 5_000;
    const res = await fetch(new URL("webhook/ext", inst.http), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify([{ sid: SID, prefix: "main", received_at: at, completed_at: at }]),
    });
    expect(res.status).toBe(204);
    const mark = page.locator(".session-head [data-busy]");
    await mark.waitFor();
    expect(await mark.textContent()).toBe("● busy");
    // The sessions list marks it too, and only it.
    await page.goto(viewUrl(page, "#/"));
    const row = page.locator(`[data-sid="${SID}"] [data-busy]`);
    await row.waitFor();
    expect(await page.locator("[data-busy]").count()).toBe(1);
    expect(await axe(page)).toEqual([]);
    // The window ends and the mark goes, with nothing else changing.
    await page.clock.fastForward(10_000);
    await row.waitFor({ state: "detached" });
  });
});
