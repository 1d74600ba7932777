import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { readLines } from "../src/harness/transcript-lines.js";
import { writeDump } from "../src/instance/transcripts/dump.js";
import { ItemIndex, readSlice } from "../src/instance/transcripts/items.js";
import { claudeTurn } from "../test/helpers/transcript-records.js";
import { round } from "./measure.js";

// Typed items (issue 10 item 2): how fast a 200 MB Claude Code transcript is
// classified into the item index (the catch-up every feed does once), and
// whether memory stays flat while it is — the index keeps per-record offsets
// and links, never items. Then what a typed read deep in the file costs (one
// checkpoint re-classified, not the file) and a whole-file dump's time and
// memory. The measuring runs in a child process of its own, so its RSS is
// not the other groups' garbage.

const TARGET_BYTES = 200 * 2 ** 20;
const SID = "3f1c9a52-7d4e-4b8a-9c21-5e6f7a8b9c0d";
const MB = 2 ** 20;

/** Write a transcript of realistic turns (every record kind, varied sizes). */
async function generate(path: string): Promise<number> {
  const out = createWriteStream(path);
  let bytes = 0;
  let turns = 0;
  while (bytes < TARGET_BYTES) {
    const text = `${claudeTurn(turns, (turns % 5) * 1000).join("\n")}\n`;
    bytes += Buffer.byteLength(text);
    turns++;
    if (!out.write(text)) await new Promise<void>((r) => out.once("drain", () => r()));
  }
  await new Promise<void>((resolve, reject) => {
    out.once("error", reject);
    out.end(() => resolve());
  });
  return turns;
}

export async function benchTranscriptItems() {
  const dir = mkdtempSync(join(tmpdir(), "ccmsg-bench-items-"));
  try {
    const path = join(dir, `${SID}.jsonl`);
    const turns = await generate(path);
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--expose-gc", fileURLToPath(import.meta.url), path, String(turns), dir],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout!.on("data", (c: Buffer) => {
      out += c.toString();
    });
    const code = await new Promise<number | null>((r) => child.once("exit", r));
    if (code !== 0) throw new Error(`transcript-items bench child exited ${code}`);
    return { file_mb: round(statSync(path).size / MB), turns, ...JSON.parse(out) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// --- the measuring child ---

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) gc();
  else {
    setFlagsFromString("--expose-gc");
    (runInNewContext("gc") as () => void)();
  }
}

const rssMb = () => round(process.memoryUsage().rss / MB);
const heapMb = () => round(process.memoryUsage().heapUsed / MB);

async function measure(path: string, turns: number, dir: string) {
  const size = statSync(path).size;
  // Baseline: lines parsed, nothing classified (warms the page cache too).
  let t0 = performance.now();
  let lines = 0;
  for await (const batch of readLines(path)) lines += batch.length;
  const parseMs = performance.now() - t0;

  collect();
  const rssBefore = rssMb();
  const heapBefore = heapMb();
  const index = new ItemIndex({ sid: SID, path, harness: "claude", home: dir });
  const samples: { at_pct: number; rss_mb: number }[] = [];
  let next = 0.1;
  let peak = rssBefore;
  t0 = performance.now();
  for await (const batch of readLines(path)) {
    index.lines(batch, false);
    const last = batch.at(-1)!;
    const done = (last.offset + last.bytes) / size;
    if (done >= next) {
      const rss = rssMb();
      peak = Math.max(peak, rss);
      samples.push({ at_pct: Math.round(done * 100), rss_mb: rss });
      next += 0.1;
    }
  }
  const indexMs = performance.now() - t0;
  const rssAfter = rssMb();
  collect();
  const rssAfterGc = rssMb();
  const heapAfterGc = heapMb();

  // A typed read 90% into the file: re-classifies from one checkpoint.
  const since = `t${Math.floor(turns * 0.9)}-r1`;
  const reads: number[] = [];
  for (let i = 0; i < 5; i++) {
    t0 = performance.now();
    await readSlice(index, { sinceUuid: since }, () => true, 500, MB - 16 * 1024);
    reads.push(performance.now() - t0);
  }

  // A whole-file dump (default selection), streamed to disk.
  collect();
  let dumpPeak = rssMb();
  const timer = setInterval(() => {
    dumpPeak = Math.max(dumpPeak, rssMb());
  }, 50);
  t0 = performance.now();
  const dump = await writeDump(index, join(dir, "dumps"), {
    sid: SID,
    types: ["-system:attachment"],
    range: {},
    keeps: (t) => !t.startsWith("system:attachment"),
    writtenAt: Date.now(),
  });
  const dumpMs = performance.now() - t0;
  clearInterval(timer);
  const items = Object.values(dump.entries).reduce((a, b) => a + b, 0);
  rmSync(dump.path);

  return {
    lines,
    records_indexed: index.records,
    parse_only_mb_per_s: round(size / MB / (parseMs / 1000)),
    typed_index_mb_per_s: round(size / MB / (indexMs / 1000)),
    typed_index_ms: Math.round(indexMs),
    rss_mb: {
      before: rssBefore,
      during: samples,
      peak,
      after: rssAfter,
      after_gc: rssAfterGc,
    },
    heap_mb: { before: heapBefore, after_gc: heapAfterGc },
    index_bytes_per_record: Math.round(((heapAfterGc - heapBefore) * MB) / index.records),
    read_500_at_90pct_ms: round(reads.sort((a, b) => a - b)[2]!, 1),
    dump_whole: {
      ms: Math.round(dumpMs),
      items,
      mb: round(dump.bytes / MB),
      rss_peak_mb: dumpPeak,
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.length >= 5) {
  const [path, turns, dir] = process.argv.slice(2) as [string, string, string];
  process.stdout.write(`${JSON.stringify(await measure(path, Number(turns), dir))}\n`);
}
