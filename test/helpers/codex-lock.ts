import { spawn } from "node:child_process";
import { readThreadLocks } from "../../src/harness/codex/thread-locks.js";

// A running Codex thread as Codex shows it (harness spec §7.4): its
// `thread-writer-locks/<thread>.lock` held by an flock — here flock(1) in its
// own process group, which `release()` kills (the thread ended).

export async function holdThreadLock(
  codexHome: string,
  thread: string,
): Promise<{ release(): void }> {
  const lock = `${codexHome}/thread-writer-locks/${thread}.lock`;
  const holder = spawn("flock", ["-x", lock, "sleep", "600"], { stdio: "ignore", detached: true });
  const release = () => {
    try {
      process.kill(-holder.pid!, "SIGKILL");
    } catch {
      // Already gone.
    }
  };
  process.once("exit", release);
  // Until flock(1) has taken it, the lock reads as one left behind.
  const deadline = Date.now() + 5000;
  for (;;) {
    const read = await readThreadLocks(codexHome);
    if ((read.ok && read.threads.includes(thread)) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return { release };
}
