import { describe, expect, it } from "vitest";
import { requiredPath } from "../helpers/env.js";

describe("requiredPath (test helper)", () => {
  it("answers an absolute path", () => {
    expect(requiredPath({ XDG_STATE_HOME: "/tmp/x/state" }, "XDG_STATE_HOME")).toBe("/tmp/x/state");
  });

  it("refuses an unset, empty or relative variable, naming it", () => {
    expect(() => requiredPath({}, "XDG_STATE_HOME")).toThrow(/XDG_STATE_HOME is unset or empty/);
    expect(() => requiredPath({ XDG_STATE_HOME: "" }, "XDG_STATE_HOME")).toThrow(/unset or empty/);
    expect(() => requiredPath({ XDG_STATE_HOME: "undefined/state" }, "XDG_STATE_HOME")).toThrow(
      /not an absolute path/,
    );
  });
});
