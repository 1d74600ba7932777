import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../src/client/client.js";
import { FIND_LIMITS } from "../src/instance/files/find.js";
import { READ_LIMIT } from "../src/instance/files/text.js";
import { startDaemon } from "./daemon.js";
import { median, percentile, round } from "./measure.js";

// The file ops (issue 12 item 1) on a large tree, through a real instance:
// `file_read` of a small and of a limit-sized file, `file_find` for a rare
// name, a common one (stops at the hit limit) and one that matches nothing
// (the whole walk), `dir_list` of a 5000-entry directory — and pings on a
// second connection while the whole-tree walks run (the walk must not stall
// the instance).

/** 40 × 25 × 25 directories of 4 files: 25 000 dirs, 100 000 files. */
const FANOUT = [40, 25, 25];
const FILES_PER_DIR = 4;

function buildTree(root: string): { files: number; dirs: number } {
  let files = 0;
  let dirs = 0;
  writeFileSync(join(root, ".gitignore"), "build/\n*.tmp\n");
  const walk = (dir: string, depth: number) => {
    if (depth === FANOUT.length) {
      for (let f = 0; f < FILES_PER_DIR; f++) {
        writeFileSync(join(dir, `module-${f}.ts`), "export {};\n");
        files++;
      }
      return;
    }
    for (let i = 0; i < FANOUT[depth]!; i++) {
      const sub = join(dir, depth === 0 ? `pkg-${i}` : `d${depth}-${i}`);
      mkdirSync(sub);
      dirs++;
      walk(sub, depth + 1);
    }
  };
  walk(root, 0);
  // One rare name deep down; an ignored build tree that would match it too.
  writeFileSync(join(root, "pkg-39", "d1-24", "d2-24", "zanzibar-flag.ts"), "export {};\n");
  mkdirSync(join(root, "build", "out"), { recursive: true });
  writeFileSync(join(root, "build", "out", "zanzibar-flag.js"), "");
  const wide = join(root, "wide");
  mkdirSync(wide);
  for (let i = 0; i < 5000; i++) writeFileSync(join(wide, `entry-${i}.txt`), "");
  writeFileSync(join(root, "small.ts"), "export const x = 1;\n".repeat(50));
  writeFileSync(join(root, "large.txt"), "0123456789abcdef\n".repeat(READ_LIMIT / 17 + 100));
  return { files: files + 5003, dirs: dirs + 3 };
}

async function timed(runs: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

const stats = (ms: number[]) => ({
  p50: round(median(ms), 2),
  p99: round(percentile(ms, 99), 2),
  runs: ms.length,
});

export async function benchFiles() {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-files-"));
  const tree = join(dir, "tree");
  mkdirSync(tree);
  const t0 = performance.now();
  const size = buildTree(tree);
  const buildMs = performance.now() - t0;
  const { child, socket } = await startDaemon(join(dir, "state"), {
    HOME: dir,
    CLAUDE_CONFIG_DIR: join(dir, "claude"),
  });
  const sid = randomUUID();
  const session = await Client.connectUnix(socket);
  await session.call("hello", { role: "session", protocol_version: 3, sid, cwd: tree });
  const person = await Client.connectUnix(socket);
  await person.call("hello", { role: "user", protocol_version: 3 });
  const pinger = await Client.connectUnix(socket);

  const read = (path: string) => person.call("file_read", { sid, kind: "contained", path });
  const find = (query: string) =>
    person.call("file_find", { sid, kind: "contained", query }) as Promise<{
      hits: unknown[];
      truncated: boolean;
    }>;
  await read("small.ts"); // warm the path caches once

  const readSmall = await timed(200, () => read("small.ts"));
  const readLarge = await timed(50, () => read("large.txt"));
  const list = await timed(20, () =>
    person.call("dir_list", { sid, kind: "contained", path: "wide" }),
  );
  const rare = await timed(5, () => find("zanzibar"));
  const rareHits = (await find("zanzibar")).hits.length;
  const common = await timed(5, () => find("module"));
  const commonTruncated = (await find("module")).truncated;

  // The whole walk, with pings beside it.
  const during: number[] = [];
  const whole: number[] = [];
  for (let r = 0; r < 3; r++) {
    let done = false;
    const w0 = performance.now();
    const walk = find("no-such-name-anywhere").finally(() => {
      done = true;
    });
    while (!done) {
      const p0 = performance.now();
      await pinger.call("instance_ping", {});
      during.push(performance.now() - p0);
    }
    const res = await walk;
    whole.push(performance.now() - w0);
    if (res.truncated) throw new Error("the whole-tree walk ran out of budget");
  }

  for (const c of [session, person, pinger]) c.close();
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  rmSync(dir, { recursive: true, force: true });
  return {
    tree: { ...size, build_ms: Math.round(buildMs) },
    limits: FIND_LIMITS,
    file_read_small_ms: stats(readSmall),
    file_read_512k_ms: stats(readLarge),
    dir_list_5000_ms: stats(list),
    file_find_rare_ms: { ...stats(rare), hits: rareHits },
    file_find_common_ms: { ...stats(common), truncated: commonTruncated },
    file_find_whole_walk_ms: stats(whole),
    ping_during_walk_ms: {
      p50: round(median(during), 2),
      p99: round(percentile(during, 99), 2),
      max: round(Math.max(...during), 2),
      samples: during.length,
    },
  };
}
