import { describe, expect, it } from "vitest";
import { checkConfig } from "../../src/config.js";

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
