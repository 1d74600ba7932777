import { describe, expect, it } from "vitest";
import { requiredPath } from "../helpers/env.js";
import { FakeHarness } from "../helpers/fake-harness.js";
import { sharedInstance } from "../helpers/instance.js";
import { newSid, Peer } from "../helpers/peer.js";
import { consoleErrors, openConsole, sharedBrowser } from "./browser.js";

const shared = sharedInstance();
const b = sharedBrowser();

describe("the web console", () => {
  it("shows sessions in their sections and sends from the composer", async () => {
    const { inst } = shared;
    const live = newSid();
    const paused = newSid();
    const waiting = newSid();
    const a = await Peer.unix(inst.socket);
    await a.helloSession(live, {
      title: "alpha session",
      repo: "acme/widgets",
      ws: "widgets",
      branch: "main",
      cwd: "/tmp",
    });
    await a.subscribe("inbox");
    const p = await Peer.unix(inst.socket);
    await p.helloSession(paused, {
      title: "paused one",
      repo: "acme/widgets",
      ws: "widgets-2",
      cwd: "/tmp",
    });
    await p.call("session_stopping", {});
    p.close();
    const h = await FakeHarness.start({
      configHome: requiredPath(inst.env, "CLAUDE_CONFIG_DIR"),
      sid: waiting,
    });
    h.writeFiles({ status: "waiting", waitingFor: "permission dialog", name: "needs a yes" });

    const { page, context } = await openConsole(b.browser, inst);
    await page.waitForSelector(`[data-section="waiting"] [data-sid="${waiting}"]`);
    await page.waitForSelector(`[data-section="live"] [data-sid="${live}"]`);
    await page.waitForSelector(`[data-section="paused"] [data-sid="${paused}"]`);
    await page.screenshot({ path: "/tmp/sessions.png", fullPage: true });

    await page.click(`[data-sid="${live}"] a.session-title`);
    await page.fill("#composer-text", "hello from the console");
    const arrived = a.next((f) => f.topic === "inbox" && !f.snapshot);
    await page.click("button[type=submit]:has-text('Send')");
    const frame = await arrived;
    expect((frame.data as { text: string }[])[0]!.text).toBe("hello from the console");
    await page.waitForSelector('[data-delivery="delivered"]');
    await page.screenshot({ path: "/tmp/session.png", fullPage: true });
    expect(consoleErrors(page)).toEqual([]);
    await context.close();
    a.close();
  });
});
