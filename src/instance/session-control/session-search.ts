import type {
  FoundSession,
  SearchHarness,
  SearchRequest,
} from "../../harness/transcript-search.js";
import { workerThreads } from "../../util/lazy-builtins.js";
import type { Logger } from "../../util/logger.js";
import type { SearchEngine } from "../search/engine.js";
import { indexable } from "../search/sessions.js";
import type { SearchJob, SearchMessage } from "./search-worker.js";

// `session_search` off the event loop (DR-0032): each search runs on a one-shot worker
// thread (search-worker.ts) with a deadline. The worker stops itself at the
// deadline between chunks; a pattern stuck inside one match cannot, so the
// worker is ended from here shortly after the deadline — what it found so far
// is kept, and the answer says `truncated`. A search the index can answer —
// no regular expression, every term with a word in it, an index that has read
// every transcript — is answered from it instead (search/sessions.ts; DR-0037).

/** The time a search may take unless the config says otherwise. */
export const DEFAULT_SEARCH_BUDGET_MS = 5000;
/** How long past its deadline a worker may take to stop on its own. */
const STOP_GRACE_MS = 250;
/** Searches running at once; more wait their turn (their deadline runs). */
const PARALLEL_SEARCHES = 2;

export interface SearchOutcome {
  hits: FoundSession[];
  truncated: boolean;
}

export class SessionSearches {
  /** The worker module sits beside this one, in `dist/instance/` and in the
   * bundle's `dist/bin/` alike. */
  private readonly workerUrl = new URL("./search-worker.js", import.meta.url);
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly harness: SearchHarness,
    private readonly home: string,
    private readonly budgetMs: number,
    private readonly log: Logger,
    private readonly index?: Pick<SearchEngine, "sessions">,
  ) {}

  /** Run one search (arguments already checked with `compileSearch`).
   * Rejects only when the worker cannot run or fails. */
  async run(request: SearchRequest): Promise<SearchOutcome> {
    const now = Date.now();
    const deadline = now + this.budgetMs;
    if (this.index !== undefined && indexable(request)) {
      const answered = await this.index.sessions(request, now, deadline).catch((error: unknown) => {
        this.log.warn({ err: error }, "session_search: the index failed; walking instead");
        return undefined;
      });
      if (answered !== undefined) return answered;
    }
    if (this.running >= PARALLEL_SEARCHES) await new Promise<void>((r) => this.waiting.push(r));
    this.running++;
    try {
      if (Date.now() >= deadline) return { hits: [], truncated: true };
      return await this.start({ harness: this.harness, home: this.home, request, deadline, now });
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private start(job: SearchJob): Promise<SearchOutcome> {
    return new Promise((resolve, reject) => {
      const hits: FoundSession[] = [];
      const worker = new (workerThreads().Worker)(this.workerUrl, { workerData: job });
      worker.unref();
      let settled = false;
      const settle = (outcome: SearchOutcome | Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        void worker.terminate();
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };
      const timer = setTimeout(
        () => {
          this.log.info({ budget_ms: this.budgetMs }, "session_search: ended past its deadline");
          settle({ hits, truncated: true });
        },
        Math.max(0, job.deadline - Date.now()) + STOP_GRACE_MS,
      );
      worker.on("message", (m: SearchMessage) => {
        if (m.kind === "hit") hits.push(m.hit);
        else if (m.kind === "done") settle({ hits, truncated: m.truncated });
        else settle(new Error(m.msg));
      });
      worker.on("error", (e) => settle(e));
      worker.on("exit", () => settle({ hits, truncated: true }));
    });
  }
}
