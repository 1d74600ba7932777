import { appendFileSync, copyFileSync, mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requiredPath } from "../helpers/env.js";
import { FakeHarness } from "../helpers/fake-harness.js";
import { http } from "../helpers/http.js";
import { ROOT, runCli, startInstance, type TestInstance } from "../helpers/instance.js";
import { newSid, Peer } from "../helpers/peer.js";
import {
  axe,
  consoleErrors,
  openConsole,
  type PageGlobals,
  screenshot,
  sharedBrowser,
  viewUrl,
} from "./browser.js";

// Issue 11's acceptance, in real headless Chromium against a real instance:
// sessions in their sections, the composer, the board (drag and drop, a
// second tab, the keyboard), an instance restart, phone width, a foreign
// page, and axe. One browser and one instance for the file; pages reused.

const b = sharedBrowser();
let inst: TestInstance;
const sids = { live: newSid(), paused: newSid(), waiting: newSid() };
let live: Peer;
let transcript: string;
const FIXTURE = join(
  ROOT,
  "test/fixtures/claude-code/config-home/projects/-home-dev-widgets/3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d.jsonl",
);

async function item(id: string): Promise<Record<string, unknown> | undefined> {
  const r = await http(inst.http, "GET", "/api/snapshot");
  const items = (r.body as { workItems: { items: Record<string, unknown>[] } }).workItems.items;
  return items.find((i) => i.id === id);
}

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  inst = await startInstance();
  // The live session's transcript: a copy of the Claude Code fixture (its
  // half-written last line included) under the instance's config home.
  const projects = join(requiredPath(inst.env, "CLAUDE_CONFIG_DIR"), "projects", "-tmp");
  mkdirSync(projects, { recursive: true });
  transcript = join(projects, `${sids.live}.jsonl`);
  copyFileSync(FIXTURE, transcript);
  live = await Peer.unix(inst.socket);
  await live.helloSession(sids.live, {
    title: "alpha: wire the claim button",
    repo: "acme/widgets",
    ws: "widgets",
    branch: "feat/claim",
    cwd: "/tmp",
  });
  await live.subscribe("inbox");
  const p = await Peer.unix(inst.socket);
  await p.helloSession(sids.paused, {
    title: "beta: docs pass",
    repo: "acme/widgets",
    ws: "widgets-docs",
    branch: "docs",
    cwd: "/tmp",
  });
  await p.call("session_stopping", {});
  p.close();
  const h = await FakeHarness.start({
    configHome: requiredPath(inst.env, "CLAUDE_CONFIG_DIR"),
    sid: sids.waiting,
  });
  h.writeFiles({
    status: "waiting",
    waitingFor: "permission to run npm publish",
    name: "gamma: release",
  });
  for (const [id, title, priority] of [
    ["w-1", "Wire the claim button", "high"],
    ["w-2", "Write the release notes", "normal"],
    ["w-3", "Keyboard-only claim", "low"],
  ] as const)
    expect((await http(inst.http, "POST", "/api/work-items", { id, title, priority })).status).toBe(
      200,
    );
});

afterAll(async () => {
  live?.close();
  await inst?.stop();
});

describe("the web console", () => {
  let page: Page;

  it("shows every session in its section, grouped by repository and worktree", async () => {
    ({ page } = await openConsole(b.browser, inst));
    await page.waitForSelector(`[data-section="waiting"] [data-sid="${sids.waiting}"]`);
    await page.waitForSelector(`[data-section="live"] [data-sid="${sids.live}"]`);
    await page.waitForSelector(`[data-section="paused"] [data-sid="${sids.paused}"]`);
    expect(await page.textContent(`[data-sid="${sids.waiting}"]`)).toContain(
      "waits for permission to run npm publish",
    );
    // The filter narrows every section.
    await page.fill('input[type="search"]', "docs");
    await page.waitForSelector(`[data-sid="${sids.live}"]`, { state: "detached" });
    expect(await page.isVisible(`[data-sid="${sids.paused}"]`)).toBe(true);
    await page.fill('input[type="search"]', "");
    await screenshot(page, "sessions");
    expect(await axe(page)).toEqual([]);
  });

  it("pins a session, kept in the console's KV namespace", async () => {
    await page.click(`[data-sid="${sids.live}"] button[aria-pressed]`);
    await page.waitForSelector(`[data-sid="${sids.live}"] button[aria-pressed="true"]`);
    const reader = await Peer.unix(inst.socket);
    await reader.helloUser();
    const pins = await reader.call<{ value: string[] }>("kv_read", { ns: "console", key: "pins" });
    expect(pins.value).toEqual([sids.live]);
    reader.close();
  });

  it("sends from the composer as the person: the session's inbox gets it, the page says delivered", async () => {
    await page.click(`[data-sid="${sids.live}"] a.session-title`);
    await page.fill("#composer-text", "Please also cover the **busy** case.");
    const arrived = live.next((f) => f.topic === "inbox" && f.snapshot !== true);
    await page.keyboard.press("Control+Enter");
    const frame = await arrived;
    expect(frame.data).toMatchObject([
      { from: "user", text: "Please also cover the **busy** case." },
    ]);
    await page.waitForSelector('[data-delivery="delivered"]');
    expect(await page.inputValue("#composer-text")).toBe("");
    // The HUD card: read by the instance's own `ccmsg hud` (a child process).
    await page.waitForSelector(".hud");
    await page.waitForSelector(".timeline .titem");
    await screenshot(page, "session");
    expect(await axe(page)).toEqual([]);
  });

  it("says the composer's message went as a message (no terminal to type it into), framed by Claude Code as from another session", async () => {
    // DR-0055: the live session here runs in no tmux pane.
    const said = await page.textContent('[data-delivery="delivered"]');
    expect(said).toContain("delivered as a message");
    expect(said).toContain("Claude Code shows it as from another session");
  });

  it("shows the session's transcript as typed items, calls folded with their results, and follows appends", async () => {
    await page.waitForSelector(".timeline .titem");
    const timeline = page.locator(".timeline");
    await page.waitForSelector(".timeline :text('Add a claim button to the board')");
    // A call carries its result, folded until opened: the sub-agent's task
    // and its answer, the Read call and the lines it read.
    const task = timeline.locator("article.tool", { hasText: "Find the claim API" });
    await task.locator("summary").click();
    expect(await task.textContent()).toContain("POST /api/work-items/:id/claim");
    const read = timeline
      .locator("article.tool", { hasText: "/home/dev/widgets/web/board.tsx" })
      .first();
    await read.locator("summary").click();
    expect(await read.textContent()).toMatch(/lines: 3/);
    // A record appended to the file shows up, its Markdown as elements.
    const record = {
      type: "user",
      uuid: "u-e2e-1",
      sessionId: sids.live,
      cwd: "/tmp",
      timestamp: new Date().toISOString(),
      message: { role: "user", content: "Appended while you watch: **bold** and `code`." },
    };
    // Complete the fixture's half-written last line first (a new line).
    appendFileSync(transcript, `\n${JSON.stringify(record)}\n`);
    await page.waitForSelector(".timeline strong:text('bold')");
    expect(await axe(page)).toEqual([]);
  });

  it("says a message to a session that is not listening is held, and why", async () => {
    await page.goto(viewUrl(page, `#/session/${sids.paused}`));
    await page.fill("#composer-text", "for when you are back");
    await page.click("button:has-text('Send')");
    await page.waitForSelector('[data-delivery="held"]');
    expect(await page.textContent('[data-delivery="held"]')).toContain("held: paused");
    await page.waitForSelector(".held-list li:has-text('for when you are back')");
  });

  it("shows notifications live, marks the ones that ask for a decision, counts the unread", async () => {
    await page.goto(viewUrl(page, "#/"));
    await live.call("notify_send", { text: "Tests are green." });
    await live.call("notify_send", { text: "Ship it now or wait for review?" });
    await page.waitForSelector(".nav-count:has-text('2')");
    await page.click("nav a:has-text('Notifications')");
    await page.waitForSelector(".feed-item.decision:has-text('Ship it now')");
    expect(await page.isVisible(".feed-item:not(.decision):has-text('Tests are green.')")).toBe(
      true,
    );
    await screenshot(page, "notifications");
    expect(await axe(page)).toEqual([]);
    await page.click("nav a:has-text('Sessions')");
    await page.waitForSelector(".nav-count", { state: "detached" });
  });

  it("moves a card dragged to blocked: the database changes and a second tab shows it", async () => {
    const base = viewUrl(page, "#/board");
    await page.goto(base);
    const second = await page.context().newPage();
    await second.goto(base);
    await second.waitForSelector('[data-lane="ready"] [data-item="w-1"]');
    await page.waitForSelector('[data-lane="ready"] [data-item="w-1"]');
    await page.waitForSelector(".readiness .badge");
    await page.dragAndDrop('[data-item="w-1"] .card-title', '[data-lane="blocked"] h2');
    const t0 = Date.now();
    await second.waitForSelector('[data-lane="blocked"] [data-item="w-1"]');
    console.log(`board: drop → second tab shows the move in ${Date.now() - t0} ms`);
    expect(await item("w-1")).toMatchObject({ status: "blocked" });
    await screenshot(page, "board");
    expect(await axe(page)).toEqual([]);
    await second.close();
  });

  it("claims and moves a card with the keyboard alone", async () => {
    // From the "new work item" field, Tab reaches the card's own controls.
    await page.focus("#new-item-title");
    const claim = '[data-item="w-3"] .card-actions button';
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate((sel) => {
        const d = (globalThis as unknown as PageGlobals).document;
        return d.activeElement === d.querySelector(sel);
      }, claim);
    }
    expect(reached).toBe(true);
    await page.keyboard.press("Enter");
    const claimed = await until(
      "the claim",
      () => item("w-3"),
      (i) => i?.owner !== null,
    );
    expect(claimed).toMatchObject({ owner: "me", status: "running" });
    await page.waitForSelector('[data-lane="running"] [data-item="w-3"]');
    // The card's own "Move to" menu, then Alt+→ on it.
    await page.focus('[data-item="w-3"] select');
    await page.keyboard.press("Alt+ArrowRight");
    await until(
      "the move",
      () => item("w-3"),
      (i) => i?.status === "blocked",
    );
    await page.waitForSelector('[data-lane="blocked"] [data-item="w-3"]');
  });

  it("browses and edits the key-value store", async () => {
    await page.goto(viewUrl(page, "#/kv"));
    await page.fill('input[size="14"]', "notes");
    await page.keyboard.press("Enter");
    await page.waitForSelector("#ns-h:has-text('notes')");
    await page.fill('.kv-editor input[type="text"]', "plan");
    await page.fill("#kv-value-new", '{"steps": 3}');
    await page.click(".kv-editor button:has-text('Add')");
    await page.waitForSelector(".kv-table td:has-text('plan')");
    const reader = await Peer.unix(inst.socket);
    await reader.helloUser();
    expect(await reader.call("kv_read", { ns: "notes", key: "plan" })).toMatchObject({
      value: { steps: 3 },
    });
    reader.close();
    await screenshot(page, "kv");
    expect(await axe(page)).toEqual([]);
  });

  it("shows file reservations live: reserved and released with the CLI, released by the person here", async () => {
    const env = { ...inst.env, CCMSG_STATE_DIR: inst.stateDir };
    const reserve = (glob: string, reason: string) =>
      runCli(
        ["reserve", glob, "--for", "30m", "--reason", reason, "--sid", sids.live],
        env,
        undefined,
        {
          cwd: "/tmp",
        },
      );
    await page.goto(viewUrl(page, "#/reservations"));
    await page.waitForSelector(".reservations-view");
    expect((await reserve("widgets/src/**", "claim button")).code).toBe(0);
    const row = ".reservations-table tr:has-text('/tmp/widgets/src/**')";
    await page.waitForSelector(row);
    expect(await page.textContent(row)).toMatch(/exclusive.*claim button.*in 30 min/);
    // The holder is named as the console names its session, and links to it.
    expect(await page.textContent(row)).toContain("alpha: wire the claim button");
    expect(await page.getAttribute(`${row} a`, "href")).toBe(`#/session/${sids.live}`);
    await screenshot(page, "reservations");
    expect(await axe(page)).toEqual([]);

    const gone = await runCli(["release", "widgets/src/**", "--sid", sids.live], env, undefined, {
      cwd: "/tmp",
    });
    expect(gone.code, gone.stderr).toBe(0);
    await page.waitForSelector(row, { state: "detached" });

    // The person releases one from here (after confirming).
    expect((await reserve("widgets/docs/*.md", "docs pass")).code).toBe(0);
    const docs = ".reservations-table tr:has-text('/tmp/widgets/docs/*.md')";
    await page.waitForSelector(docs);
    page.once("dialog", (d) => void d.accept());
    await page.click(`${docs} button:has-text('Release')`);
    await page.waitForSelector(docs, { state: "detached" });
    const listed = await runCli(["reservations", "--json"], env);
    expect(JSON.parse(listed.stdout).reservations).toEqual([]);
    // One left for the phone-width check below.
    expect((await reserve("widgets/README.md", "a long reason to wrap on a phone")).code).toBe(0);
  });

  it("finds what a session was sent from the search box, links to the session, and keeps the search in the URL", async () => {
    const word = `zebracorn${Date.now().toString(36)}`;
    const sent = await runCli(["post", sids.live, `the ${word} plan is ready`, "--json"], {
      ...inst.env,
      CCMSG_STATE_DIR: inst.stateDir,
    });
    expect(sent.code, sent.stderr).toBe(0);
    // Indexed first (the index takes a message within milliseconds, longer on
    // a loaded machine): the view searches once, when typing stops.
    await until(
      "the message in the search index",
      () => http(inst.http, "GET", `/api/search?q=${word}`),
      (r) => ((r.body as { hits?: unknown[] }).hits ?? []).length > 0,
    );
    await page.goto(viewUrl(page, "#/sessions"));
    await page.click('nav a:has-text("Search")');
    await page.waitForSelector(".search-view");
    // The keyboard alone: "/" puts the cursor in the box.
    await page.keyboard.press("/");
    await page.keyboard.type(word);
    // What was typed stays typed: the route catching up with an earlier part
    // of the word (the box is quiet for 250 ms on a loaded machine) never
    // writes that part back into the box.
    await expect.poll(() => page.inputValue('.search-view input[type="search"]')).toBe(word);
    const hit = page.locator(".search-hit", { hasText: word });
    await hit.waitFor();
    expect(await hit.locator("mark").first().textContent()).toBe(word);
    expect(await hit.locator(`a[href="#/session/${sids.live}"]`).textContent()).toBe(
      "alpha: wire the claim button",
    );
    await expect.poll(() => page.url()).toContain(`#/search?q=${word}`);
    await screenshot(page, "search");
    expect(await axe(page)).toEqual([]);
    // A query nothing matches says so.
    await page.fill('.search-view input[type="search"]', `${word}xyz`);
    await page.waitForSelector(`.search-view [role="status"]:has-text("Nothing found")`);
    expect(await axe(page)).toEqual([]);
    // Said after the search ran, it shows up without searching again.
    const later = await runCli(["post", sids.live, `and ${word}xyz too`, "--json"], {
      ...inst.env,
      CCMSG_STATE_DIR: inst.stateDir,
    });
    expect(later.code, later.stderr).toBe(0);
    await page.locator(".search-hit", { hasText: `${word}xyz` }).waitFor();
    // The URL alone brings the search back, and its result leads to the session.
    // (The hits of the longer word on screen also hold this one: wait for
    // the box and for the first message, which only this query finds.)
    await page.goto(viewUrl(page, `#/search?q=${word}`));
    await expect.poll(() => page.inputValue('.search-view input[type="search"]')).toBe(word);
    await page.locator(".search-hit", { hasText: `${word} plan` }).waitFor();
    await page.click(`.search-hit a[href="#/session/${sids.live}"]`);
    await page.waitForSelector(".session-page h1:has-text('alpha: wire the claim button')");
  });

  it("keeps to a phone's width (375 px) without horizontal scrolling, in both themes", async () => {
    const { context, page: phone } = await openConsole(b.browser, inst, {
      width: 375,
      height: 812,
    });
    for (const view of [
      "#/",
      `#/session/${sids.live}`,
      "#/board",
      "#/notifications",
      "#/reservations",
      "#/kv/console",
    ]) {
      await phone.goto(viewUrl(page, view));
      await phone.waitForSelector("main .view");
      const width = await phone.evaluate(() => {
        const root = (globalThis as unknown as PageGlobals).document.documentElement;
        return { scroll: root.scrollWidth, client: root.clientWidth };
      });
      expect({ view, ...width }).toEqual({ view, scroll: width.client, client: width.client });
    }
    await phone.goto(viewUrl(page, "#/"));
    await phone.selectOption(".theme-pick select", "dark");
    await phone.waitForFunction(
      () =>
        (globalThis as unknown as PageGlobals).document.documentElement.dataset.theme === "dark",
    );
    await phone.waitForSelector(`[data-sid="${sids.live}"]`);
    await screenshot(phone, "sessions-phone-dark");
    expect(await axe(phone)).toEqual([]);
    await phone.selectOption(".theme-pick select", "light");
    await phone.waitForFunction(
      () =>
        (globalThis as unknown as PageGlobals).document.documentElement.dataset.theme === "light",
    );
    await context.close();
  });

  it("lets a page of another origin neither read nor change anything (HTTP and WebSocket)", async () => {
    const foreign: Server = createServer((_req, res) => {
      res.setHeader("content-type", "text/html");
      res.end("<!doctype html><title>elsewhere</title><p>another site</p>");
    });
    await new Promise<void>((r) => foreign.listen(0, "127.0.0.1", r));
    const port = (foreign.address() as { port: number }).port;
    // The same browser context: the owner's cookie is there (and, localhost
    // being one site, SameSite lets it go along) — the Origin check stops it.
    const other = await page.context().newPage();
    await other.goto(`http://127.0.0.1:${port}/`);
    const base = inst.http;
    const outcome = await other.evaluate(async (base) => {
      const read = await fetch(`${base}api/snapshot`, { credentials: "include" }).then(
        (r) => `read ${r.status}`,
        () => "read refused",
      );
      await fetch(`${base}api/work-items/w-2/move`, {
        method: "POST",
        mode: "no-cors",
        credentials: "include",
        headers: { "content-type": "text/plain" },
        body: JSON.stringify({ lane: "done" }),
      }).catch(() => {});
      await fetch(`${base}api/work-items/w-2/move`, {
        method: "POST",
        credentials: "include",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ lane: "done" }),
      }).catch(() => {});
      const ws = await new Promise<string>((resolve) => {
        const W = (globalThis as unknown as PageGlobals).WebSocket;
        const s = new W(`${base.replace(/^http/, "ws")}ws`);
        s.onopen = () => resolve("ws opened");
        s.onerror = () => resolve("ws refused");
      });
      return { read, ws };
    }, base);
    expect(outcome).toEqual({ read: "read refused", ws: "ws refused" });
    expect(await item("w-2")).toMatchObject({ status: "open" });
    await other.close();
    foreign.close();
  });

  it("reconnects after the instance restarts, recovers its state and keeps the draft", async () => {
    await page.goto(viewUrl(page, `#/session/${sids.live}`));
    await page.fill("#composer-text", "half-written thought");
    // A second browser whose cookie is gone by the time the instance is back.
    const { context: other, page: forgotten } = await openConsole(b.browser, inst);
    await other.clearCookies();
    const port = new URL(inst.http).port;
    live.close();
    await inst.stop();
    await page.waitForSelector('[data-conn="reconnecting"]');
    // What is shown stays, marked as not live.
    await page.click("nav a:has-text('Sessions')");
    await page.waitForSelector(".stale-note");
    await page.waitForSelector(`[data-sid="${sids.paused}"]`);
    inst = await startInstance({
      stateDir: inst.stateDir,
      env: inst.env,
      args: ["--http", `127.0.0.1:${port}`],
    });
    await page.waitForSelector('[data-conn="open"]', { timeout: 15_000 });
    // Without the cookie the other one is told how to sign in again.
    await forgotten.waitForSelector('[data-conn="signed_out"]', { timeout: 15_000 });
    expect(await forgotten.textContent(".banner-bad")).toContain("ccmsg open");
    await other.close();
    await page.waitForSelector(".stale-note", { state: "detached" });
    await page.waitForSelector(`[data-section="paused"] [data-sid="${sids.paused}"]`);
    await page.click("nav a:has-text('Board')");
    await page.waitForSelector('[data-lane="blocked"] [data-item="w-1"]');
    await page.goto(viewUrl(page, `#/session/${sids.live}`));
    expect(await page.inputValue("#composer-text")).toBe("half-written thought");
    expect(
      consoleErrors(page).filter(
        (e) => !/WebSocket|ERR_CONNECTION_REFUSED|Failed to load resource/.test(e),
      ),
    ).toEqual([]);
  });
});
