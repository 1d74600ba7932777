import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { ROOT, runCli, type TestInstance } from "../helpers/instance.js";

/** Debian's Chromium (installed by .ci/run), driven by playwright-core. */
export const CHROMIUM = process.env.CCMSG_CHROMIUM ?? "/usr/bin/chromium";

const ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Start Chromium. `launch` gives it a fresh temporary profile (its own
 * user-data-dir, removed when it closes), so no state leaks between files. */
export async function launchChromium(): Promise<{ browser: Browser; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium; .ci/run does) or set CCMSG_CHROMIUM`,
    );
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  return {
    browser,
    async close() {
      await browser.close().catch(() => {});
    },
  };
}

/** One browser for a whole test file (started before its tests). */
export function sharedBrowser(): { browser: Browser } {
  const shared = {} as { browser: Browser; close(): Promise<void> };
  beforeAll(async () => {
    Object.assign(shared, await launchChromium());
  }, 60_000);
  afterAll(async () => {
    await shared.close?.();
  });
  return shared;
}

/** A one-time sign-in link from `ccmsg open --print --json`, as a person gets it. */
export async function signInLink(inst: TestInstance): Promise<string> {
  const r = await runCli(["open", "--print", "--json", "--no-start"], {
    ...inst.env,
    CCMSG_STATE_DIR: inst.stateDir,
  });
  if (r.code !== 0) throw new Error(`ccmsg open failed: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { url: string }).url;
}

/** A browser context signed in to `inst` (its cookie set through the
 * one-time link, exactly as `ccmsg open` does it) and a page on the console. */
export async function openConsole(
  browser: Browser,
  inst: TestInstance,
  options: { width?: number; height?: number; context?: BrowserContext } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const context =
    options.context ??
    (await browser.newContext({
      viewport: { width: options.width ?? 1280, height: options.height ?? 860 },
    }));
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  (page as Page & { consoleErrors?: string[] }).consoleErrors = errors;
  await page.goto(await signInLink(inst));
  await page.waitForSelector('[data-conn="open"]');
  return { context, page };
}

/** What the page logged as errors (CSP violations included). */
export function consoleErrors(page: Page): string[] {
  return (page as Page & { consoleErrors?: string[] }).consoleErrors ?? [];
}

/** The little of a page's globals the tests read inside `page.evaluate`
 * (test files compile without the DOM library): `page(globalThis)`. */
export interface PageGlobals {
  document: {
    documentElement: { scrollWidth: number; clientWidth: number; dataset: Record<string, string> };
    activeElement: unknown;
    querySelector(selector: string): unknown;
  };
  WebSocket: new (url: string) => { onopen: (() => void) | null; onerror: (() => void) | null };
  axe: {
    run(
      context: unknown,
      options: unknown,
    ): Promise<{ violations: { id: string; nodes: { target: unknown }[] }[] }>;
  };
}

const axeSource = readFileSync(
  createRequire(import.meta.url).resolve("axe-core/axe.min.js"),
  "utf8",
);

/** axe's WCAG 2 A/AA rules on the page as it is now; the violations. */
export async function axe(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not
  // govern (an injected <script> would be refused, as it should be).
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const w = globalThis as unknown as PageGlobals;
    return w.axe.run(w.document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
    });
  });
  return result.violations.map(
    (v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(", ")}`,
  );
}

/** The console's URL at a view (`#/…`), from wherever the page is. */
export function viewUrl(page: Page, hash: string): string {
  return `${page.url().split("#")[0]}${hash}`;
}

/** A screenshot for the README (`docs/screenshots/<name>.png`): written when
 * missing, or when asked (`npm run screenshots` sets CCMSG_SCREENSHOTS=1), so
 * an ordinary test run leaves the tree alone. */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = join(ROOT, "docs", "screenshots");
  const path = join(dir, `${name}.png`);
  if (existsSync(path) && process.env.CCMSG_SCREENSHOTS !== "1") return;
  mkdirSync(dir, { recursive: true });
  await page.evaluate("scrollTo(0, 0)");
  await page.screenshot({ path, fullPage: false });
}
