import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { claude } from "../test/helpers/transcript-records.js";

// A config home of generated Claude Code transcripts for the `search` bench:
// sessions of turns shaped like real ones (a prompt, thinking, text, tool
// calls whose results carry most of the bytes, each result stored twice as
// Claude Code does — in the message and in `toolUseResult`), some with a
// sub-agent's file. Words follow a Zipf law over a made-up vocabulary, so
// the index sees a realistic spread: a few words everywhere, most rare.
// Deterministic (a seeded generator): every run indexes the same corpus.

export const VOCABULARY = 30_000;
/** A word said in a few prompts only. */
export const NEEDLE = "zanzibar";

/** A seeded PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = [
  "ka",
  "lo",
  "mi",
  "ren",
  "sto",
  "vu",
  "ex",
  "par",
  "qui",
  "dor",
  "tel",
  "an",
  "bri",
  "sul",
  "fe",
  "gon",
];

/** The vocabulary, most frequent first. */
export function vocabulary(): string[] {
  const r = rng(7);
  const seen = new Set<string>();
  const words: string[] = [];
  while (words.length < VOCABULARY) {
    const n = 1 + Math.floor(r() * 4);
    let w = "";
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(r() * SYLLABLES.length)];
    if (w.length < 3 || seen.has(w) || w === NEEDLE) continue;
    seen.add(w);
    words.push(w);
  }
  return words;
}

/** Samples word ranks by Zipf's law (s = 1.07). */
function zipf(r: () => number): () => number {
  const cumulative = new Float64Array(VOCABULARY);
  let sum = 0;
  for (let i = 0; i < VOCABULARY; i++) {
    sum += 1 / (i + 1) ** 1.07;
    cumulative[i] = sum;
  }
  return () => {
    const x = r() * sum;
    let lo = 0;
    let hi = VOCABULARY - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

export interface Corpus {
  home: string;
  bytes: number;
  sessions: string[];
  files: number;
}

const uuidOf = (r: () => number) => {
  const h = () => Math.floor(r() * 16).toString(16);
  const hex = (n: number) => Array.from({ length: n }, h).join("");
  return `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`;
};

/** Write sessions of about `sessionBytes` each until `totalBytes`. */
export function writeCorpus(home: string, totalBytes: number, sessionBytes: number): Corpus {
  const r = rng(42);
  const words = vocabulary();
  const rank = zipf(r);
  const say = (n: number) => {
    const out: string[] = [];
    for (let i = 0; i < n; i++) out.push(words[rank()]!);
    return out.join(" ");
  };
  const code = (lines: number) => {
    const out: string[] = [];
    for (let i = 0; i < lines; i++)
      out.push(`  const ${words[rank()]} = ${words[rank()]}(${words[rank()]}, "${say(3)}");`);
    return out.join("\n");
  };
  const between = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const sessions: string[] = [];
  let bytes = 0;
  let files = 0;
  const now = Date.now();
  // Sessions spread over the last 30 days, oldest first.
  const spacing = (30 * 86_400_000) / Math.ceil(totalBytes / sessionBytes);
  for (let s = 0; bytes < totalBytes; s++) {
    const sid = uuidOf(r);
    sessions.push(sid);
    const dir = join(home, "projects", `-work-repo${s % 20}`);
    mkdirSync(dir, { recursive: true });
    let at = now - 30 * 86_400_000 + s * spacing;
    const write = (path: string, target: number, agent: boolean) => {
      const fd = openSync(path, "w");
      files++;
      let size = 0;
      let chunk: string[] = [];
      let chunkBytes = 0;
      const put = (record: object) => {
        const line = `${JSON.stringify({ ...record, sessionId: sid, ...(agent ? { isSidechain: true } : {}) })}\n`;
        chunk.push(line);
        chunkBytes += line.length;
        size += line.length;
        if (chunkBytes > 1 << 20) {
          writeSync(fd, chunk.join(""));
          chunk = [];
          chunkBytes = 0;
        }
      };
      for (let t = 0; size < target; t++) {
        const u = (i: number) => `${sid.slice(0, 8)}-${agent ? "a" : "m"}${t}-${i}`;
        at += between(1000, 60_000);
        const needle = !agent && s % 25 === 0 && t === 7 ? ` please wire the ${NEEDLE} flag` : "";
        put(claude.prompt(u(0), at, `${say(between(8, 40))}${needle}`));
        const msg = `msg_${u(1)}`;
        at += 800;
        put(
          claude.assistant(u(1), at, msg, [
            { type: "thinking", thinking: say(between(40, 200)), signature: "EqQB" },
            { type: "text", text: say(between(20, 120)) },
          ]),
        );
        const calls = between(1, 4);
        for (let c = 0; c < calls; c++) {
          const id = `toolu_${u(2 + c)}`;
          const kind = c % 3;
          const input =
            kind === 0
              ? { command: `npm test -- ${words[rank()]}`, description: say(4) }
              : kind === 1
                ? { file_path: `/work/repo/src/${words[rank()]}/${words[rank()]}.ts` }
                : { pattern: words[rank()], path: "/work/repo/src" };
          const name = kind === 0 ? "Bash" : kind === 1 ? "Read" : "Grep";
          at += 500;
          put(
            claude.assistant(u(10 + c), at, `msg_${u(10 + c)}`, [claude.toolUse(id, name, input)]),
          );
          const output = code(between(10, 120));
          const extra =
            kind === 0
              ? { stdout: output, stderr: "", interrupted: false }
              : kind === 1
                ? { type: "text", file: { filePath: input.file_path, content: output } }
                : { mode: "content", numFiles: 3, filenames: [] };
          at += 2000;
          put(claude.result(u(20 + c), at, id, output, extra));
        }
        at += 900;
        put(
          claude.assistant(u(30), at, `msg_${u(30)}`, [
            { type: "text", text: say(between(10, 80)) },
          ]),
        );
      }
      writeSync(fd, chunk.join(""));
      closeSync(fd);
      return size;
    };
    bytes += write(join(dir, `${sid}.jsonl`), sessionBytes, false);
    if (s % 10 === 0) {
      const agents = join(dir, sid, "subagents");
      mkdirSync(agents, { recursive: true });
      bytes += write(join(agents, `agent-a${s}.jsonl`), sessionBytes / 5, true);
    }
  }
  return { home, bytes, sessions, files };
}
