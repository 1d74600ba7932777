import { existsSync } from "node:fs";
import type { Worker } from "node:worker_threads";
import type { AttentionItem } from "../../contract/attention.js";
import { contractError } from "../../contract/errors.js";
import type { InboxMessage, Notification } from "../../contract/messaging.js";
import type { SearchAnswer } from "../../contract/search.js";
import type { ReceiptEvent } from "../../harness/receipt-evidence.js";
import type { TranscriptHarness } from "../../harness/transcript-files.js";
import type { FoundSession, SearchRequest } from "../../harness/transcript-search.js";
import { openDatabase } from "../../store/database.js";
import type { DocRow } from "../../store/search-index.js";
import type { SearchArgs } from "../../store/search-query.js";
import { workerThreads } from "../../util/lazy-builtins.js";
import type { Logger } from "../../util/logger.js";
import type { IndexEvent, IndexJob, IndexRequest } from "./index-worker.js";
import type { QueryJob, QueryQuestion, QueryReply, QueryRequest } from "./query-worker.js";
import { attentionRow, messageRow, notificationRow } from "./rows.js";

// Search across sessions (DR-0037), as the instance sees it: two threads
// beside the event loop — the index worker, the one writer of `search.db`,
// which follows every transcript and takes the messages and notifications
// handed to it here; and the query worker, which reads the index. Rows are
// handed over in batches, never waited for: one message per HAND_EVERY_MS (or
// per HAND_MAX_ROWS), so a send pays no thread hop of its own — a message a
// turn cost the sender's path a structured clone and woke the worker for one
// row. A search finds a message at most HAND_EVERY_MS later than it did.
// Neither thread starts before it has work (issue 26): the index worker at
// the first row handed over or question asked — or soon after start when a
// new index must read the store's messages before compaction drops them —
// and the query worker at the first question.

export interface SearchEngineOptions {
  /** `<state dir>/search.db`. */
  index: string;
  /** The instance's store (a new index starts from its messages). */
  store: string;
  harness: TranscriptHarness;
  home: string;
  log: Logger;
  /** How often the transcript tree is walked in full (default 5 s). */
  rescanMs?: number;
  /** Test hook: the index's file may not grow past this many pages from the
   * start, as on a full disk (`limitPages` changes it later). */
  maxPageCount?: number;
}

/** How long `ready` waits for an index that does not open. */
const READY_WAIT_MS = 10_000;
/** The index worker starts this long after the instance: its first requests
 * are answered before a thread loads beside them (DR-0022). */
const START_DELAY_MS = 200;
/** Rows wait at most this long to be handed to the index worker. */
const HAND_EVERY_MS = 50;
/** A batch this large is handed over at once. */
const HAND_MAX_ROWS = 2000;
/** A query running longer than this is ended (its worker with it). */
export const QUERY_DEADLINE_MS = 5000;
/** A query worker with nothing asked for this long ends (its thread and
 * heap with it); the next question starts another. */
const QUERY_IDLE_MS = 30_000;

export class SearchEngine {
  private indexer: Worker | undefined;
  private query: Worker | undefined;
  private queryIdle: NodeJS.Timeout | undefined;
  private rows: DocRow[] = [];
  private handTimer: NodeJS.Timeout | undefined;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve(v: unknown): void; reject(e: unknown): void; timer: NodeJS.Timeout }
  >();
  private closed = false;
  private closedResolve!: () => void;
  private readonly indexerClosed = new Promise<void>((r) => {
    this.closedResolve = r;
  });
  /** Resolves once the index is open and, when it is new, holds the
   * messages the store still has — the store's compaction waits for it, so
   * none is forgotten before it is read (at most READY_WAIT_MS). */
  readonly ready: Promise<{ fresh: boolean }>;
  /** Whether the index has read every transcript (as of its last report). */
  caughtUp = false;
  /** Why the index could not be opened, until it is (the worker retries). */
  private unavailable: string | undefined;
  private pageLimit: number | undefined;
  private readonly receiptListeners: ((events: ReceiptEvent[]) => void)[] = [];

  private readied: (v: { fresh: boolean }) => void = () => {};

  constructor(private readonly o: SearchEngineOptions) {
    this.pageLimit = o.maxPageCount;
    this.ready = new Promise((r) => {
      this.readied = r;
      setTimeout(() => r({ fresh: false }), READY_WAIT_MS).unref();
    });
    if (mustImport(o)) setTimeout(() => this.start(), START_DELAY_MS).unref();
    else this.readied({ fresh: false });
  }

  private start(): void {
    if (this.closed || this.indexer !== undefined) return;
    const { o } = this;
    const job: IndexJob = {
      index: o.index,
      store: o.store,
      harness: o.harness,
      home: o.home,
      rescanMs: o.rescanMs ?? 5000,
      ...(this.pageLimit === undefined ? {} : { maxPageCount: this.pageLimit }),
    };
    const indexer = new (workerThreads().Worker)(new URL("./index-worker.js", import.meta.url), {
      workerData: job,
    });
    this.indexer = indexer;
    indexer.unref();
    const readied = this.readied;
    indexer.on("message", (e: IndexEvent) => {
      switch (e.kind) {
        case "unavailable":
          this.unavailable = e.why;
          break;
        case "ready":
          this.unavailable = undefined;
          readied({ fresh: e.fresh });
          if (e.fresh) o.log.info("search: a new index; reading every transcript into it");
          break;
        case "caught_up":
          this.caughtUp = e.done;
          break;
        case "receipts":
          for (const l of this.receiptListeners) l(e.events);
          break;
        case "warn":
          o.log.warn({ ...e.fields, err: e.err }, e.msg);
          break;
        case "closed":
          this.closedResolve();
          break;
      }
    });
    indexer.on("error", (error) => o.log.error({ err: error }, "search: the index worker failed"));
    indexer.on("exit", () => {
      this.closedResolve();
      readied({ fresh: false });
    });
    this.flush();
  }

  /** Be told what transcripts say about receipts, as the index reads them. */
  onReceipts(listener: (events: ReceiptEvent[]) => void): void {
    this.receiptListeners.push(listener);
  }

  /** Why no receipt can come now (the index cannot be opened), or
   * undefined while it reads. */
  receiptsUnavailable(): string | undefined {
    if (this.unavailable !== undefined)
      return `the search index is unavailable: ${this.unavailable}`;
    if (this.closed) return "the search index is stopped";
    return undefined;
  }

  /** A message was sent (delivered or held). */
  message(to: string, m: InboxMessage): void {
    this.hand(messageRow(to, m));
  }

  /** A notification went out (`notify_send`, `say_post`). */
  notification(n: Notification): void {
    this.hand(notificationRow(n));
  }

  /** An attention item ended (DR-0062): its record joins the session's. */
  attention(item: AttentionItem): void {
    this.hand(attentionRow(item));
  }

  private hand(row: DocRow): void {
    if (this.closed) return;
    this.start();
    this.rows.push(row);
    if (this.rows.length >= HAND_MAX_ROWS) this.flush();
    else if (this.handTimer === undefined) {
      this.handTimer = setTimeout(() => this.flush(), HAND_EVERY_MS);
      this.handTimer.unref();
    }
  }

  private flush(): void {
    clearTimeout(this.handTimer);
    this.handTimer = undefined;
    if (this.rows.length === 0 || this.indexer === undefined) return;
    const rows = this.rows;
    this.rows = [];
    this.indexer.postMessage({ kind: "docs", rows } satisfies IndexRequest);
  }

  /** Search the index (arguments are checked by the query worker). While
   * the index cannot be opened, that is the answer — not an empty result
   * that claims to be indexing. */
  search(args: SearchArgs): Promise<SearchAnswer> {
    if (this.unavailable !== undefined)
      return Promise.reject(
        contractError(
          "internal_error",
          `search is unavailable: ${this.unavailable}; the index is tried again by itself`,
        ),
      );
    return this.ask({ kind: "search", args }) as Promise<SearchAnswer>;
  }

  /** Test hook (`/_test/disk-full`): the index's file may not grow past
   * `pages`, as on a full disk. */
  limitPages(pages: number): void {
    this.pageLimit = pages;
    this.indexer?.postMessage({ kind: "max-page-count", pages } satisfies IndexRequest);
  }

  /** `session_search` from the index; undefined when the index cannot stand
   * in for the walk yet (it has not read every transcript). */
  sessions(
    request: SearchRequest,
    now: number,
    deadline: number,
  ): Promise<{ hits: FoundSession[]; truncated: boolean } | undefined> {
    return this.ask({ kind: "sessions", request, now, deadline }) as Promise<
      { hits: FoundSession[]; truncated: boolean } | undefined
    >;
  }

  private ask(q: QueryQuestion): Promise<unknown> {
    if (this.closed) return Promise.reject(contractError("internal_error", "instance is stopping"));
    // Asked before anything was indexed: the index starts following now.
    this.start();
    const worker = this.queryWorker();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.o.log.warn({ ms: QUERY_DEADLINE_MS }, "search: a query ran past its deadline; ended");
        this.endQueryWorker(
          contractError(
            "internal_error",
            `the search ran past ${QUERY_DEADLINE_MS} ms and was ended`,
          ),
        );
      }, QUERY_DEADLINE_MS);
      this.pending.set(id, { resolve, reject, timer });
      worker.postMessage({ ...q, id } as QueryRequest);
    });
  }

  private queryWorker(): Worker {
    if (this.query !== undefined) return this.query;
    const job: QueryJob = { index: this.o.index };
    const worker = new (workerThreads().Worker)(new URL("./query-worker.js", import.meta.url), {
      workerData: job,
    });
    worker.unref();
    worker.on("message", (r: QueryReply) => {
      const p = this.pending.get(r.id);
      if (p === undefined) return;
      this.pending.delete(r.id);
      clearTimeout(p.timer);
      if (this.pending.size === 0) this.idleEnd(worker);
      if (r.ok) p.resolve(r.result);
      else
        p.reject(
          r.code === "invalid_args"
            ? contractError("invalid_args", r.msg)
            : contractError("internal_error", `search failed: ${r.msg}`),
        );
    });
    worker.on("error", (error) => {
      this.o.log.error({ err: error }, "search: the query worker failed");
      if (this.query === worker)
        this.endQueryWorker(contractError("internal_error", "search failed inside the instance"));
    });
    worker.on("exit", () => {
      if (this.query === worker)
        this.endQueryWorker(contractError("internal_error", "search failed inside the instance"));
    });
    this.query = worker;
    return worker;
  }

  /** End `worker` if it is still idle QUERY_IDLE_MS from now. */
  private idleEnd(worker: Worker): void {
    clearTimeout(this.queryIdle);
    this.queryIdle = setTimeout(() => {
      if (this.query !== worker || this.pending.size > 0) return;
      this.query = undefined;
      void worker.terminate();
    }, QUERY_IDLE_MS);
    this.queryIdle.unref();
  }

  /** End the query worker; what it had not answered fails with `error`. */
  private endQueryWorker(error: Error): void {
    const worker = this.query;
    this.query = undefined;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(error);
    }
    this.pending.clear();
    void worker?.terminate();
  }

  /** Hand over what is queued and stop both workers. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.endQueryWorker(contractError("internal_error", "instance is stopping"));
    const indexer = this.indexer;
    if (indexer === undefined) return;
    indexer.postMessage({ kind: "close" } satisfies IndexRequest);
    await Promise.race([this.indexerClosed, new Promise((r) => setTimeout(r, 500).unref())]);
    await indexer.terminate();
  }
}

/** Whether a new index must start now: there is none yet and the store
 * holds messages it has to read before the store's compaction (which waits
 * for `ready`) drops the old ones. */
function mustImport(o: SearchEngineOptions): boolean {
  if (existsSync(o.index)) return false;
  try {
    const db = openDatabase(o.store, { readonly: true });
    try {
      return db.prepare("SELECT 1 FROM inbox LIMIT 1").get() !== undefined;
    } finally {
      db.close();
    }
  } catch {
    // No store to read (or none readable): the worker says what it finds.
    return true;
  }
}
