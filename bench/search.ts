import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "../src/client/client.js";
import { openSearchReader } from "../src/store/search-index.js";
import { runSearch, type SearchArgs } from "../src/store/search-query.js";
import { startDaemon } from "./daemon.js";
import { median, percentile, round } from "./measure.js";
import { type Corpus, NEEDLE, vocabulary, writeCorpus } from "./search-corpus.js";

// Search across sessions (issue 12 item 2; DR-0037) over a gigabyte of
// generated Claude Code transcripts: a real instance builds its index from
// nothing while a second connection pings it back to back (the index is
// written on a worker thread: pings must not stall), then a set of queries —
// rare and common words, a phrase, a prefix, OR, each filter — is timed
// against the index itself and end to end through `GET /api/search`; how
// soon a message sent is found; `session_search` answered from the index.
//
// CCMSG_BENCH_SEARCH_MB sets the corpus size (default 1024);
// CCMSG_BENCH_SEARCH_DIR keeps the corpus there between runs.

const MB = 2 ** 20;
const SESSION_BYTES = 5 * MB;
const ROUNDS_DIRECT = 20;
const ROUNDS_HTTP = 10;

function corpusAt(dir: string, total: number): Corpus {
  const meta = join(dir, "corpus.json");
  if (existsSync(meta)) {
    const c = JSON.parse(readFileSync(meta, "utf8")) as Corpus;
    if (c.bytes >= total) return c;
  }
  const c = writeCorpus(join(dir, "claude"), total, SESSION_BYTES);
  writeFileSync(meta, JSON.stringify(c));
  return c;
}

async function startInstance(dir: string, home: string) {
  const stateDir = join(dir, `state-${Date.now()}`);
  const started = await startDaemon(
    stateDir,
    { HOME: dir, CLAUDE_CONFIG_DIR: home },
    "127.0.0.1:0",
  );
  const { child } = started;
  const secret = readFileSync(join(stateDir, "owner.secret"), "utf8").trim();
  const get = async (path: string) => {
    const res = await fetch(new URL(path, started.http), {
      headers: { authorization: `Bearer ${secret}` },
    });
    return (await res.json()) as Record<string, unknown>;
  };
  return { child, stateDir, socket: started.socket, get };
}

const fileSize = (path: string) => (existsSync(path) ? statSync(path).size : 0);

const stats = (samples: number[]) => ({
  p50: round(median(samples), 2),
  p99: round(percentile(samples, 99), 2),
  max: round(Math.max(...samples), 2),
});

export async function benchSearch() {
  const total = Number(process.env.CCMSG_BENCH_SEARCH_MB ?? 1024) * MB;
  const kept = process.env.CCMSG_BENCH_SEARCH_DIR;
  const dir = kept ?? mkdtempSync(join(tmpdir(), "ccmsg-bench-fts-"));
  const g0 = performance.now();
  const corpus = corpusAt(dir, total);
  const generateS = (performance.now() - g0) / 1000;
  const inst = await startInstance(dir, corpus.home);
  try {
    const b0 = performance.now();
    const pinger = await Client.connectUnix(inst.socket);
    // The HTTP stack loads on its first request (DR-0022): not the index's cost.
    await inst.get("/api/search?q=x");
    // Build: from an empty index to one that has read every transcript,
    // pinging all the while.
    const pings: number[] = [];
    let built = false;
    const pinging = (async () => {
      while (!built) {
        const t0 = performance.now();
        await pinger.call("instance_ping", {});
        pings.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    for (;;) {
      const r = await inst.get("/api/search?q=x");
      if (r.ok === true && r.indexing === false) break;
      await new Promise((res) => setTimeout(res, 250));
    }
    const buildS = (performance.now() - b0) / 1000;
    built = true;
    await pinging;
    const idle: number[] = [];
    for (let i = 0; i < 300; i++) {
      const t0 = performance.now();
      await pinger.call("instance_ping", {});
      idle.push(performance.now() - t0);
    }
    const index = join(inst.stateDir, "search.db");
    // Then the index is folded into one b-tree while idle: queries are timed
    // on the index at rest (its files unchanged for a second).
    const m0 = performance.now();
    const look = () =>
      [index, `${index}-wal`].map((f) => (existsSync(f) ? statSync(f).mtimeMs : 0)).join();
    for (let last = look(); ; ) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = look();
      if (now === last) break;
      last = now;
    }
    const mergeS = (performance.now() - m0) / 1000 - 1;
    const indexBytes = fileSize(index) + fileSize(`${index}-wal`);

    // Queries.
    const words = vocabulary();
    const queries: [string, SearchArgs][] = [
      ["needle (6 prompts)", { q: NEEDLE }],
      ["rare word", { q: words[20_000]! }],
      ["mid word", { q: words[2000]! }],
      ["common word", { q: words[100]! }],
      ["most common word", { q: words[0]! }],
      ["two words AND", { q: `${words[3]} ${words[700]}` }],
      ["phrase", { q: `"${words[0]} ${words[1]}"` }],
      ["prefix", { q: `${words[500]!.slice(0, 3)}*` }],
      ["OR", { q: `${words[20_000]} OR ${words[2000]}` }],
      ["--sid + common word", { q: words[0]!, sid: corpus.sessions[3]! }],
      ["--type message:user:in + word", { q: words[50]!, type: "message:user:in" }],
      ["--since 1d + word", { q: words[10]!, since: Date.now() - 86_400_000 }],
    ];
    const reader = openSearchReader(index)!;
    const direct: number[] = [];
    const byQuery: Record<string, { direct_p50: number; http_p50?: number; hits: number }> = {};
    for (const [name, args] of queries) {
      const samples: number[] = [];
      let hits = 0;
      for (let i = 0; i < ROUNDS_DIRECT; i++) {
        const t0 = performance.now();
        hits = runSearch(reader, args).hits.length;
        samples.push(performance.now() - t0);
      }
      direct.push(...samples);
      byQuery[name] = { direct_p50: round(median(samples), 2), hits };
    }
    reader.close();
    const viaHttp: number[] = [];
    for (const [name, args] of queries) {
      const params = new URLSearchParams({ q: args.q });
      if (args.sid !== undefined) params.set("sid", args.sid);
      if (args.type !== undefined) params.set("type", args.type);
      if (args.since !== undefined) params.set("since", String(args.since));
      const samples: number[] = [];
      for (let i = 0; i < ROUNDS_HTTP; i++) {
        const t0 = performance.now();
        const r = await inst.get(`/api/search?${params}`);
        samples.push(performance.now() - t0);
        if (r.ok !== true) throw new Error(`search failed: ${JSON.stringify(r)}`);
      }
      viaHttp.push(...samples);
      byQuery[name]!.http_p50 = round(median(samples), 2);
    }

    // A message, from sent to found.
    const person = await Client.connectUnix(inst.socket);
    await person.call("hello", { role: "user", protocol_version: 3 });
    const session = await Client.connectUnix(inst.socket);
    const sid = randomUUID();
    await session.call("hello", { role: "session", sid, protocol_version: 3 });
    const found: number[] = [];
    for (let i = 0; i < 10; i++) {
      const word = `quokka${i}x${Date.now().toString(36)}`;
      const t0 = performance.now();
      await person.call("message_send", { to: sid, text: `a note about ${word}` });
      for (;;) {
        const r = await inst.get(`/api/search?q=${word}`);
        if ((r.hits as unknown[]).length > 0) break;
      }
      found.push(performance.now() - t0);
    }

    // session_search from the index.
    const sessionSearch: number[] = [];
    let sessionHits = 0;
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = (await person.call("session_search", { query: `${NEEDLE} flag` })) as {
        hits: unknown[];
      };
      sessionSearch.push(performance.now() - t0);
      sessionHits = r.hits.length;
    }
    person.close();
    session.close();
    pinger.close();
    return {
      transcripts_mb: round(corpus.bytes / MB),
      files: corpus.files,
      generate_s: round(generateS),
      build: {
        s: round(buildS),
        mb_per_s: round(corpus.bytes / MB / buildS),
        merge_s: round(mergeS),
        index_mb: round(indexBytes / MB),
        index_to_transcripts: round(indexBytes / corpus.bytes, 2),
      },
      ping_ms: {
        idle: stats(idle),
        while_indexing: { ...stats(pings), samples: pings.length },
      },
      query_ms: {
        index: stats(direct),
        http: stats(viaHttp),
        by_query: byQuery,
      },
      message_found_ms: stats(found),
      session_search_ms: { ...stats(sessionSearch), hits: sessionHits },
    };
  } finally {
    inst.child.kill("SIGTERM");
    await new Promise((r) => inst.child.once("exit", r));
    rmSync(inst.stateDir, { recursive: true, force: true });
    if (kept === undefined) rmSync(dir, { recursive: true, force: true });
  }
}
