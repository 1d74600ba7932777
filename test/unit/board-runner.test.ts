import { afterEach, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/instance.js";

// The mutation runner's slots (ecc-surfaces §5.5): no failure may keep one.
// Loaded from the build, where the worker module sits beside the runner.
const { MutationRunner } = (await import(
  `${ROOT}/dist/board/runner.js`
)) as typeof import("../../src/board/runner.js");

let runner: InstanceType<typeof MutationRunner> | undefined;
afterEach(async () => {
  await runner?.close();
  runner = undefined;
});

describe("the mutation runner", () => {
  it("frees the slot when a mutation cannot be handed to its worker", async () => {
    runner = new MutationRunner();
    // A function cannot cross to a worker: the hand-off itself throws.
    for (let i = 0; i < 3; i++) {
      await expect(
        runner.run(":memory:", "move", { id: "x", lane: () => "done" }),
      ).rejects.toMatchObject({ code: "internal_error" });
    }
    expect(runner.metrics.active).toBe(0);
    // Both slots still admit, and the worker still answers.
    await expect(
      runner.run(":memory:", "move", { id: "nope", lane: "done" }),
    ).rejects.toMatchObject({ code: "not_found", status: 404 });
    await runner.idle();
  });
});
