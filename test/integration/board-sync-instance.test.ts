import { cpSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  isolatedHome,
  ROOT,
  runCli,
  startInstance,
  type TestInstance,
} from "../helpers/instance.js";

// The board's interval sync inside a running instance: it runs on the
// configured interval, in the background — the instance keeps answering
// while gh is still being asked — and its outcome reaches `ccmsg status`.

const started: TestInstance[] = [];
/** Directories a fake gh may still write to; empty before the homes go. */
const busyDirs: string[] = [];
afterAll(async () => {
  for (const inst of started) await inst.stop();
  // A gh call of a tick cut short by the stop still finishes (its gate is
  // open): removing the home under it would race its busy file.
  for (const dir of busyDirs)
    await until("the last gh call to finish", () => {
      try {
        return readdirSync(dir).length === 0 ? true : undefined;
      } catch {
        return true;
      }
    });
});

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An isolated home with the fake gh on PATH and a config with `sync`. */
function home(sync: unknown, extra: Record<string, string> = {}) {
  const h = isolatedHome();
  const bin = join(h.root, "bin");
  mkdirSync(bin);
  symlinkSync(join(ROOT, "test", "helpers", "fake-gh.mjs"), join(bin, "gh"));
  const data = join(h.root, "gh-data");
  cpSync(join(ROOT, "test", "fixtures", "gh"), data, { recursive: true });
  const configDir = join(h.env.XDG_CONFIG_HOME!, "ccmsg");
  mkdirSync(configDir, { recursive: true });
  writeFileSync(join(configDir, "config.json"), JSON.stringify({ sync }));
  return {
    root: h.root,
    env: {
      ...h.env,
      PATH: [bin, process.env.PATH ?? ""].join(delimiter),
      FAKE_GH_DIR: data,
      ...extra,
    } as Record<string, string>,
  };
}

async function status(env: Record<string, string>) {
  return JSON.parse((await runCli(["status", "--json"], env)).stdout);
}

describe("the instance's interval sync", () => {
  it("a failing run is recorded in status and writes nothing to the board", async () => {
    const { env } = home(
      { github: { repo: "acme/widgets", interval_seconds: 1 } },
      { FAKE_GH_UNAUTH: "1" },
    );
    const inst = await startInstance({ env });
    started.push(inst);
    const run = await until(
      "the failure in status",
      async () => (await status(env)).sync.github ?? undefined,
    );
    expect(run).toMatchObject({ ok: false, target: "acme/widgets" });
    expect(run.message).toContain("gh auth login");
    expect((await status(env)).workItems.totalCount).toBe(0);
    expect(inst.log().some((l) => l.msg === "board sync failed")).toBe(true);
  });

  it("runs on the configured interval without holding up other requests; status shows its outcome", async () => {
    const probe = isolatedHome();
    const busy = join(probe.root, "gh-busy");
    const gate = join(probe.root, "gh-gate");
    busyDirs.push(busy);
    // Every gh call waits for the gate: the sync stays in flight until the
    // test has seen the instance answer meanwhile.
    const { env } = home(
      { github: { repo: "acme/widgets", interval_seconds: 1 } },
      { FAKE_GH_GATE: gate, FAKE_GH_BUSY_DIR: busy },
    );
    const inst = await startInstance({ env });
    started.push(inst);

    // A gh call of the sync is in flight…
    await until("a gh call in flight", () => {
      try {
        return readdirSync(busy).length > 0 ? true : undefined;
      } catch {
        return undefined;
      }
    });
    // …and the instance answers meanwhile; the sync has not finished yet.
    const ping = await runCli(["--no-start", "ping", "--json"], env);
    expect(ping.code, ping.stderr).toBe(0);
    expect((await status(env)).sync.github).toBeNull();
    writeFileSync(gate, "");

    const run = await until(
      "the sync's outcome in status",
      async () => (await status(env)).sync.github ?? undefined,
    );
    expect(run).toMatchObject({ ok: true, target: "acme/widgets", counts: { created: 7 } });
    const list = JSON.parse(
      (await runCli(["board", "list", "--json", "--limit", "50"], env)).stdout,
    );
    expect(list.totalCount).toBe(7);
    // The next tick runs again: a later run, nothing new to write.
    const next = await until("a second run", async () => {
      const s = (await status(env)).sync.github;
      return s.finishedAt > run.finishedAt ? s : undefined;
    });
    expect(next.counts).toMatchObject({ created: 0, updated: 0, unchanged: 7 });
    expect(inst.log().some((l) => l.msg === "board sync" && l.level === 30)).toBe(true);
    // A dozen CLI runs and two syncs: on a loaded machine, more than 30 s.
  }, 60_000);
});
