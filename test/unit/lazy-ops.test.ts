import { describe, expect, it } from "vitest";
import { adminHandlers, authHandlers } from "../../src/instance/auth/handlers.js";
import { AUTH_ADMIN, AUTH_OPS } from "../../src/instance/auth/register.js";
import { lazyHandlers } from "../../src/instance/common/lazy-ops.js";
import { fileHandlers } from "../../src/instance/files/handlers.js";
import { FILE_OPS } from "../../src/instance/files/register.js";
import { launcherHandlers } from "../../src/instance/launcher/handlers.js";
import { LAUNCHER_OPS } from "../../src/instance/launcher/register.js";
import { sandboxHandlers } from "../../src/instance/sandbox/handlers.js";
import { SANDBOX_OPS } from "../../src/instance/sandbox/register.js";

// A capability whose module loads at its first op (issue 26) answers exactly
// the ops that module implements: one missing from the list would answer
// "not implemented", one too many would fail at its first call.

const sorted = (o: object | readonly string[]) =>
  (Array.isArray(o) ? [...o] : Object.keys(o)).sort();
// The handler families only close over their dependencies when built.
const none = {} as never;

describe("ops loaded at their first call", () => {
  it("lists every op of each lazily loaded module", () => {
    expect(sorted(FILE_OPS)).toEqual(sorted(fileHandlers(none)));
    expect(sorted(LAUNCHER_OPS)).toEqual(sorted(launcherHandlers(none)));
    expect(sorted(SANDBOX_OPS)).toEqual(sorted(sandboxHandlers(none)));
    expect(sorted(AUTH_OPS)).toEqual(sorted(authHandlers(none)));
    expect(sorted(AUTH_ADMIN)).toEqual(sorted(adminHandlers(none)));
  });

  it("loads the module once, at the first call of any op, not when registered", async () => {
    let loads = 0;
    const handlers = lazyHandlers(["instance_ping", "dir_tree"], async () => {
      loads++;
      return { instance_ping: () => "a", dir_tree: () => "b" } as never;
    });
    expect(loads).toBe(0);
    const call = (op: "instance_ping" | "dir_tree") =>
      (handlers[op] as unknown as (a: unknown, c: unknown) => unknown)({}, {});
    expect(await Promise.all([call("instance_ping"), call("dir_tree")])).toEqual(["a", "b"]);
    expect(call("dir_tree")).toBe("b");
    expect(loads).toBe(1);
  });
});
