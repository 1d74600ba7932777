import { stat } from "node:fs/promises";
import { setImmediate as turn } from "node:timers/promises";
import { parentPort, workerData } from "node:worker_threads";
import type { AttentionItem } from "../../contract/attention.js";
import type { InboxMessage } from "../../contract/messaging.js";
import type { ReceiptEvent } from "../../harness/receipt-evidence.js";
import type { TranscriptHarness } from "../../harness/transcript-files.js";
import { type Db, openDatabase } from "../../store/database.js";
import { type DocRow, openSearchIndex, SearchWriter } from "../../store/search-index.js";
import { trimWalWhenIdle } from "../../store/wal-trim.js";
import { attentionRow, messageRow } from "./rows.js";
import { TranscriptIndexer } from "./transcript-indexer.js";

// The search index's one writer, on its own thread (search/engine.ts starts
// it; DR-0037): it follows every transcript of the config home, takes the
// messages and notifications the instance hands it, and keeps `search.db`.
// Nothing here runs on the instance's event loop: a gigabyte of catch-up
// costs the instance's pings nothing but a share of the CPU.

export interface IndexJob {
  /** `<state dir>/search.db`. */
  index: string;
  /** The instance's store, whose messages a new index starts from. */
  store: string;
  harness: TranscriptHarness;
  home: string;
  rescanMs: number;
  /** Test hook: the index's file may not grow past this many pages, as on a
   * full disk. */
  maxPageCount?: number;
}

/** From the instance. */
export type IndexRequest =
  | { kind: "docs"; rows: DocRow[] }
  | { kind: "close" }
  | { kind: "max-page-count"; pages: number };

/** To the instance. */
export type IndexEvent =
  | { kind: "ready"; fresh: boolean }
  /** The index could not be opened (`why`); it is tried again by itself. */
  | { kind: "unavailable"; why: string }
  | { kind: "caught_up"; done: boolean }
  /** What transcripts said about receipts, in order (DR-0054). */
  | { kind: "receipts"; events: ReceiptEvent[] }
  | { kind: "warn"; msg: string; err?: string; fields?: Record<string, unknown> }
  | { kind: "closed" };

/** Rows of the store's inbox read per transaction when a new index starts. */
const IMPORT_BATCH = 2000;
/** Pages of FTS5 merge work per step while nothing else is to do. */
const MERGE_PAGES = 256;
/** After this much new text the index is merged into one b-tree, in steps,
 * while idle (a query then reads one list per word, not one per segment).
 * Smaller additions are left to FTS5's own automatic merging: folding a
 * large index again for each would rewrite all of it. */
const OPTIMIZE_AFTER_BYTES = 64 << 20;
/** An index that could not be opened is tried again after this long,
 * doubling up to OPEN_RETRY_MAX_MS. */
const OPEN_RETRY_FIRST_MS = 1000;
const OPEN_RETRY_MAX_MS = 30_000;

const job = workerData as IndexJob;
const post = (e: IndexEvent) => parentPort?.postMessage(e);
const warn = (msg: string, fields: Record<string, unknown> = {}) => {
  const { err, ...rest } = fields;
  post({ kind: "warn", msg, fields: rest, ...(err === undefined ? {} : { err: String(err) }) });
};

/** One open index and what follows the sources into it. */
class Run {
  readonly writer: SearchWriter;
  readonly indexer: TranscriptIndexer;
  readonly identity: Promise<string | undefined>;
  private merging = false;
  /** Transcript bytes indexed when the index was last merged whole. */
  private optimizedAt = 0;

  constructor(
    readonly fresh: boolean,
    writer: SearchWriter,
  ) {
    this.writer = writer;
    this.identity = identityOf(job.index);
    this.indexer = new TranscriptIndexer({
      harness: job.harness,
      home: job.home,
      writer,
      rescanMs: job.rescanMs,
      warn,
      caughtUp: (done) => {
        writer.batch(() => writer.setMeta("caught_up", done ? "1" : "0"));
        post({ kind: "caught_up", done });
      },
      drained: () => void this.merge(),
      receipts: (events) => post({ kind: "receipts", events }),
    });
  }

  /** Fold the index's segments into one while idle, after much was added;
   * stopped by new work, resumed when it is done. */
  private async merge(): Promise<void> {
    if (this.merging || this.indexer.bytes - this.optimizedAt < OPTIMIZE_AFTER_BYTES) return;
    this.merging = true;
    try {
      for (;;) {
        if (closing || !this.indexer.idle || !this.writer.db.open) return;
        if (!this.writer.merge(-MERGE_PAGES)) break;
        await turn();
      }
      this.optimizedAt = this.indexer.bytes;
    } finally {
      this.merging = false;
    }
  }

  close(): void {
    this.indexer.close();
    this.writer.db.close();
  }
}

let run: Run | undefined;
let closing = false;
/** Rows handed over while the index is being (re)opened; beyond
 * MAX_WAITING the oldest are dropped (an index that cannot open must not
 * grow the worker without bound). */
const waiting: DocRow[] = [];
const MAX_WAITING = 10_000;

async function identityOf(path: string): Promise<string | undefined> {
  const st = await stat(path).catch(() => undefined);
  return st === undefined ? undefined : `${st.dev}:${st.ino}`;
}

let pageLimit = job.maxPageCount;
let retryMs = OPEN_RETRY_FIRST_MS;
let retry: NodeJS.Timeout | undefined;

/** The index could not be opened (a full disk, an unwritable directory):
 * say so, and try again later — nothing else would ever open it. */
function openLater(error: unknown): void {
  const code = (error as { code?: unknown })?.code;
  const why =
    code === "SQLITE_FULL"
      ? `the disk holding ${job.index} is full`
      : `${job.index} could not be opened (${(error as Error)?.message ?? String(error)})`;
  post({ kind: "unavailable", why });
  warn("search: the index could not be opened; trying again", { err: error, retry_ms: retryMs });
  retry = setTimeout(() => {
    retry = undefined;
    if (!closing) void open().catch(openFailed);
  }, retryMs);
  retryMs = Math.min(OPEN_RETRY_MAX_MS, retryMs * 2);
}

/** The index, written: open (or create) it, or undefined once `openLater`
 * took the failure. */
function openWriter(): { writer: SearchWriter; fresh: boolean } | undefined {
  let opened: ReturnType<typeof openSearchIndex>;
  try {
    opened = openSearchIndex(job.index, pageLimit === undefined ? {} : { maxPageCount: pageLimit });
  } catch (error) {
    openLater(error);
    return undefined;
  }
  const { db, fresh } = opened;
  try {
    // The index is derived: a crash that loses its last commits only means
    // reading those lines again, and a damaged file is rebuilt.
    db.pragma("synchronous = OFF");
    db.pragma("cache_size = -32000");
    // A bulk build grows the WAL; it is cut back after each checkpoint.
    db.pragma("journal_size_limit = 67108864");
    trimWalWhenIdle(db);
    const writer = new SearchWriter(db);
    if (fresh) writer.batch(() => writer.setMeta("caught_up", "0"));
    return { writer, fresh };
  } catch (error) {
    db.close();
    openLater(error);
    return undefined;
  }
}

/** Open (or create) the index, and start following the sources. */
async function open(): Promise<void> {
  const opened = openWriter();
  if (opened === undefined || closing) {
    opened?.writer.db.close();
    return;
  }
  retryMs = OPEN_RETRY_FIRST_MS;
  const { writer, fresh } = opened;
  const r = new Run(fresh, writer);
  run = r;
  if (fresh) await importMessages();
  add(waiting.splice(0));
  post({ kind: "ready", fresh });
  await r.indexer.start();
}

/** The attention items the store still holds, ended ones (DR-0062); a store
 * from before the queue has no table, and nothing to import. */
function importAttention(store: ReturnType<typeof openDatabase>): void {
  const table = store
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'attention'")
    .get();
  if (table === undefined) return;
  const rows = store
    .prepare("SELECT body FROM attention WHERE ended_at IS NOT NULL ORDER BY id")
    .iterate() as IterableIterator<{ body: string }>;
  let batch: DocRow[] = [];
  for (const row of rows) {
    batch.push(attentionRow(JSON.parse(row.body) as AttentionItem));
    if (batch.length >= IMPORT_BATCH) {
      add(batch);
      batch = [];
    }
  }
  add(batch);
}

/** A new index starts with the messages the store still holds. */
async function importMessages(): Promise<void> {
  let store: ReturnType<typeof openDatabase>;
  try {
    store = openDatabase(job.store, { readonly: true });
  } catch (error) {
    warn("search: the store's messages could not be read", { err: error });
    return;
  }
  try {
    const rows = store
      .prepare("SELECT sid, message FROM inbox ORDER BY counter")
      .iterate() as IterableIterator<{ sid: string; message: string }>;
    let batch: DocRow[] = [];
    for (const row of rows) {
      batch.push(messageRow(row.sid, JSON.parse(row.message) as InboxMessage));
      if (batch.length >= IMPORT_BATCH) {
        add(batch);
        batch = [];
      }
    }
    add(batch);
    importAttention(store);
  } catch (error) {
    warn("search: the store's messages could not be read", { err: error });
  } finally {
    store.close();
  }
}

function add(rows: DocRow[]): void {
  if (rows.length === 0) return;
  if (run === undefined || !run.writer.db.open) {
    waiting.push(...rows);
    if (waiting.length > MAX_WAITING) waiting.splice(0, waiting.length - MAX_WAITING);
    return;
  }
  const { writer } = run;
  try {
    writer.batch(() => {
      for (const row of rows) writer.add(row);
    });
  } catch (error) {
    warn("search: rows not indexed", { err: error, rows: rows.length });
  }
}

/** The index file deleted or replaced under us: start a new one. */
async function checkFile(): Promise<void> {
  const r = run;
  if (r === undefined || closing) return;
  const now = await identityOf(job.index);
  if (now === (await r.identity) || closing || run !== r) return;
  warn("search: the index file was removed; rebuilding it");
  run = undefined;
  r.close();
  await open();
}

parentPort?.on("message", (m: IndexRequest) => {
  if (m.kind === "docs") add(m.rows);
  else if (m.kind === "max-page-count") {
    pageLimit = m.pages;
    if (run?.writer.db.open) run.writer.db.pragma(`max_page_count = ${m.pages}`);
  } else if (m.kind === "close") {
    closing = true;
    clearInterval(fileCheck);
    clearTimeout(retry);
    run?.close();
    storeTrim?.close();
    post({ kind: "closed" });
    parentPort?.close();
  }
});

const fileCheck = setInterval(
  () =>
    void checkFile().catch((error: unknown) =>
      warn("search: reopening the index failed", { err: error }),
    ),
  Math.min(2000, job.rescanMs),
);
/** The store's WAL, trimmed once its writes stop (store/wal-trim.ts) from a
 * connection of this thread's: the checkpoint's copy and sync of up to ~4 MB
 * would stall the instance's event loop for tens of milliseconds. */
function trimStore(): Db | undefined {
  if (job.store === ":memory:") return undefined;
  try {
    const db = openDatabase(job.store, { busyTimeoutMs: 0 });
    trimWalWhenIdle(db);
    return db;
  } catch (error) {
    warn("search: the store's WAL will not be trimmed", { err: error });
    return undefined;
  }
}
const storeTrim = trimStore();

/** What fails after the index itself opened (openWriter retries that). */
function openFailed(error: unknown): void {
  warn("search: the index could not be opened", { err: error });
}

open().catch(openFailed);
