import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startInstance, type TestInstance } from "../helpers/instance.js";
import { newSid, Peer } from "../helpers/peer.js";
import { axe, openConsole, screenshot, sharedBrowser, viewUrl } from "./browser.js";

// Issue 25 item 3 in real headless Chromium against a real instance: what a
// session told the person while no console was open is there when one opens,
// unread and linked to the message it answers; a mark read goes to the
// instance and outlives a reload.

const b = sharedBrowser();
let inst: TestInstance;
const A = newSid();
let mid: string;

beforeAll(async () => {
  inst = await startInstance();
  // The start's compaction runs once the index is up: send after it, so the
  // answered message is certainly among the delivered rows kept (DR-0054).
  await inst.compacted();
  const session = await Peer.unix(inst.socket);
  await session.helloSession(A, { title: "api: schema", repo: "acme/widgets", cwd: "/tmp" });
  await session.subscribe("inbox");
  const arrival = session.next((f) => f.topic === "inbox" && !f.snapshot);
  const person = await Peer.unix(inst.socket);
  await person.helloUser();
  await person.call("message_send", { to: A, text: "migrate the schema, then tell me" });
  mid = ((await arrival).data as { mid: string }[])[0]!.mid;
  person.close();
  // No console is open: the answer goes nowhere live.
  const env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
  const r = await runCli(["reply", mid, "done: migrated"], { ...env, CLAUDE_CODE_SESSION_ID: A });
  if (r.code !== 0) throw new Error(r.stderr);
  await session.call("notify_send", { text: "tests are green" });
  session.close();
});

afterAll(async () => {
  await inst?.stop();
});

describe("the console's Notifications", () => {
  let page: Page;

  it("shows what came while no console was open, unread, each reply with the message it answers", async () => {
    ({ page } = await openConsole(b.browser, inst));
    await page.waitForSelector(".nav-count:has-text('2')");
    await page.goto(viewUrl(page, "#/notifications"));
    const reply = page.locator(".feed-item.unread", { hasText: "done: migrated" });
    await reply.waitFor();
    expect(await reply.locator(".feed-answers").getAttribute("data-answers")).toBe(mid);
    expect(await reply.locator(".feed-quote").textContent()).toBe(
      "migrate the schema, then tell me",
    );
    expect(await reply.locator(".feed-answers a").getAttribute("href")).toBe(`#/session/${A}`);
    await page.waitForSelector(".feed-item.unread:has-text('tests are green')");
    expect(await axe(page)).toEqual([]);
    await screenshot(page, "notifications-kept");
  });

  it("marks one read on the instance: after a reload it is still read, the other still unread", async () => {
    await page.locator(".feed-item", { hasText: "tests are green" }).getByRole("button").click();
    await page.waitForSelector(".feed-item:not(.unread):has-text('tests are green')");
    await page.waitForSelector(".nav-count:has-text('1')");
    await page.reload();
    await page.waitForSelector(".feed-item.unread:has-text('done: migrated')");
    await page.waitForSelector(".feed-item:not(.unread):has-text('tests are green')");
    const person = await Peer.unix(inst.socket);
    await person.helloUser();
    const stored = await person.call<{ unread: number }>("notifications_read", {});
    expect(stored.unread).toBe(1);
    person.close();
  });

  it("a session page lists that session's notifications; new ones arrive live", async () => {
    await page.goto(viewUrl(page, `#/session/${A}`));
    const panel = page.locator(".session-notifications");
    await panel.locator(".feed-item:has-text('done: migrated')").waitFor();
    const session = await Peer.unix(inst.socket);
    await session.helloSession(A);
    await session.call("notify_send", { text: "one more thing" });
    await panel.locator(".feed-item:has-text('one more thing')").waitFor();
    session.close();
  });
});
