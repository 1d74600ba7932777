import { type ChildProcess, fork } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "./instance.js";

/** Another process holding the database's write lock until `release()`. */
export async function holdLock(
  path: string,
): Promise<{ child: ChildProcess; release(): Promise<void> }> {
  const child = fork(join(ROOT, "test", "helpers", "lock-holder.mjs"), [path], { stdio: "ignore" });
  await new Promise<void>((resolve) => child.once("message", () => resolve()));
  return {
    child,
    async release() {
      const exited = new Promise((r) => child.once("exit", r));
      child.send("release");
      await exited;
    },
  };
}
