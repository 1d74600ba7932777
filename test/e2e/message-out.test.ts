import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startInstance, type TestInstance } from "../helpers/instance.js";
import { messageScene, type Scene } from "../helpers/message-scene.js";
import { axe, openConsole, screenshot, sharedBrowser, viewUrl } from "./browser.js";

// Issue 25 item 5 in real headless Chromium against a real instance: the
// replier's timeline, from what the real Claude Code 2.1.328 wrote when the
// person denied its `ccmsg reply` ("Did not run 1 call"), then a message in
// and a reply the instance carried. The denied reply is a denied tool call and
// no *Message out*; the message in is *Message in*; the carried reply is
// *Message out* to its recipient with what the instance answered; and the
// few exchanges are a few rows.

const b = sharedBrowser();
let inst: TestInstance;
let scene: Scene;

beforeAll(async () => {
  inst = await startInstance();
  scene = await messageScene(inst);
});

afterAll(async () => {
  scene?.close();
  await inst?.stop();
});

describe("a replier's timeline", () => {
  it("shows a denied reply as a denied call and no message; a message in and a carried reply as messages", async () => {
    // Tall enough that the screenshot holds the whole exchange.
    const { page } = await openConsole(b.browser, inst, { height: 1000 });
    await page.goto(viewUrl(page, `#/session/${scene.replier}`));
    const timeline = page.locator(".timeline");
    // The denied call: its head says so, and no message claims it was sent.
    const denied = timeline.locator("article.tool", { hasText: "ccmsg reply 1f2e/7" });
    await denied.waitFor();
    expect(await denied.getAttribute("class")).toContain("status-denied");
    expect(await denied.locator(".call-failure").textContent()).toBe("denied: did not run");
    // The message in, from the session the console knows by name.
    const inbound = timeline.locator("article.msg-in", { hasText: scene.incoming });
    await inbound.waitFor();
    expect(await inbound.locator(".titem-type").textContent()).toBe("Message in");
    expect(await inbound.locator(".sender").textContent()).toBe(`from ${scene.senderTitle}`);
    // The reply the instance carried: to whom, and what became of it.
    const out = timeline.locator("article.msg-out");
    await out.first().waitFor();
    expect(await out.count()).toBe(1);
    expect(await out.textContent()).toContain(scene.reply);
    expect(await out.locator(".recipient").textContent()).toBe(`to ${scene.senderTitle}`);
    expect(await out.locator(".msg-status").textContent()).toBe(scene.replyStatus);
    expect(await timeline.locator(".msg-out, .msg-in", { hasText: "B here" }).count()).toBe(0);
    // A few exchanges are a few rows: the harness's bookkeeping is folded.
    const rows = await timeline.locator(".vrow").count();
    expect(rows).toBeGreaterThanOrEqual(6);
    expect(rows).toBeLessThanOrEqual(12);
    expect(await axe(page)).toEqual([]);
    await screenshot(page, "session-messages");
  });

  it("keeps to a phone's width, the denied call and the messages in sight", async () => {
    const { context, page } = await openConsole(b.browser, inst, { width: 390, height: 844 });
    await page.goto(viewUrl(page, `#/session/${scene.replier}`));
    await page.locator(".timeline article.msg-out").waitFor();
    await page.locator(".timeline article.status-denied").waitFor();
    const width = await page.evaluate(
      "({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })",
    );
    const { scroll, client } = width as { scroll: number; client: number };
    expect(scroll).toBe(client);
    await page.locator(".timeline article.msg-out").scrollIntoViewIfNeeded();
    await screenshot(page, "session-messages-phone");
    await context.close();
  });
});
