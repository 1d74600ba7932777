import { describe, expect, it } from "vitest";
import { sharedInstance } from "../helpers/instance.js";
import { consoleErrors, openConsole, sharedBrowser } from "./browser.js";

const shared = sharedInstance();
const b = sharedBrowser();

describe("smoke", () => {
  it("opens", async () => {
    const { page, context } = await openConsole(b.browser, shared.inst);
    await page.screenshot({ path: "/tmp/smoke.png" });
    expect(consoleErrors(page)).toEqual([]);
    await context.close();
  });
});
