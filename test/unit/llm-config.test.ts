import { describe, expect, it } from "vitest";
import { checkConfig } from "../../src/config/config.js";

// The `llm` section of ccmsg's config: a typo names its key, and no refusal
// quotes a token.

const check = (llm: unknown) => () => checkConfig({ llm }, "/c.json");

describe("config llm section", () => {
  it("reads sources, the gateway and prices", () => {
    const config = checkConfig(
      {
        llm: {
          sources: { local: { token: "0123456789abcdef" } },
          gateway: {
            listen: "127.0.0.1:7078",
            upstream: "https://api.anthropic.com",
            source: "local",
          },
          prices: { "claude-x": { input: 1, output: 2 } },
        },
      },
      "/c.json",
    );
    expect(config.llm?.sources.local?.token).toBe("0123456789abcdef");
    expect(config.llm?.gateway?.source).toBe("local");
    expect(config.llm?.prices?.["claude-x"]).toEqual({ input: 1, output: 2 });
  });

  it("reads a status page, off unless configured", () => {
    expect(checkConfig({ llm: {} }, "/c.json").llm?.status_page).toBeUndefined();
    const page = { url: "https://status.example.com", interval_seconds: 30, service: "api.x" };
    expect(checkConfig({ llm: { status_page: page } }, "/c.json").llm?.status_page).toEqual(page);
    expect(check({ status_page: {} })).toThrow(/llm\.status_page\.url/);
    expect(check({ status_page: { url: "ftp://x" } })).toThrow(/llm\.status_page\.url/);
    expect(check({ status_page: { url: "https://s.x", interval_seconds: 1 } })).toThrow(
      /llm\.status_page\.interval_seconds/,
    );
    expect(check({ status_page: { url: "https://s.x", every: 60 } })).toThrow(
      /llm\.status_page\.every: unknown key/,
    );
  });

  it("refuses a short token without quoting it", () => {
    let message = "";
    try {
      check({ sources: { a: { token: "short-secret" } } })();
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("llm.sources.a.token");
    expect(message).not.toContain("short-secret");
  });

  it("names the key of each mistake", () => {
    expect(check({ source: {} })).toThrow(/llm\.source: unknown key/);
    expect(check({ sources: { "a/b": { token: "0123456789abcdef" } } })).toThrow(
      /llm\.sources\.a\/b/,
    );
    expect(check({ gateway: { source: "missing" } })).toThrow(/llm\.gateway\.source/);
    expect(check({ gateway: { upstream: "ftp://x" } })).toThrow(/llm\.gateway\.upstream/);
    expect(check({ gateway: { listen: "nowhere" } })).toThrow(/llm\.gateway\.listen/);
    expect(check({ prices: { m: { input: 1 } } })).toThrow(/llm\.prices\.m\.output/);
    expect(check({ prices: { m: { input: -1, output: 1 } } })).toThrow(/llm\.prices\.m\.input/);
  });
});
