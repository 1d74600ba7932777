import type { Worker } from "node:worker_threads";
import { type ContractError, contractError, STATE_STORE_BUSY } from "../contract/errors.js";
import { workerThreads } from "../util/lazy-builtins.js";
import type { MutationRequest, MutationResponse } from "./board-worker.js";

/** At most this many board mutations are in flight in one process — one limit
 * shared by every database and every server in it (ecc-surfaces §5.5). */
export const MAX_MUTATIONS = 2;

let active = 0;

/** Both slots are taken: `STATE_STORE_BUSY`, answered at once (HTTP 503 +
 * Retry-After), never queued and never run later. */
function admissionRefused(): ContractError {
  return contractError(
    STATE_STORE_BUSY,
    "too many work-item mutations are running; retry shortly",
    { status: 503 },
  );
}

export interface RunnerMetrics {
  active: number;
  peak: number;
  started: number;
  finished: number;
  rejected: number;
}

interface Slot {
  worker: Worker;
  current?: { id: number; resolve: (r: unknown) => void; reject: (e: Error) => void };
}

/**
 * Runs board mutations off the main thread on long-lived workers, so waiting
 * for another process's write lock stalls neither health checks nor
 * snapshots.
 *
 * Admission happens before any work: a slot is taken synchronously or the
 * request is refused at once. A slot is released only when the worker reports
 * the mutation's transaction closed — not when the client goes away — so the
 * number of waiting writers stays bounded while the database is locked.
 * Workers are never terminated mid-mutation.
 */
export class MutationRunner {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private readonly idleWaiters: (() => void)[] = [];
  readonly metrics: RunnerMetrics = { active: 0, peak: 0, started: 0, finished: 0, rejected: 0 };

  /** The worker module sits beside this one, in `dist/board/` and in the
   * bundle's `dist/bin/` alike. */
  private readonly workerUrl = new URL("./board-worker.js", import.meta.url);

  /** Test hook (`/_test/disk-full`): the page limit every mutation's
   * connection gets, as the instance's own connection does. */
  maxPageCount: number | undefined;

  constructor(private readonly busyTimeoutMs?: number) {}

  /** Take a slot and run; throws `STATE_STORE_BUSY` synchronously (before
   * any work) when both slots are taken. A mutation the worker refused or
   * could not finish rejects with the worker's `ContractError`, rebuilt. */
  run(
    dbPath: string,
    action: MutationRequest["action"],
    args: Record<string, unknown>,
  ): Promise<unknown> {
    if (active >= MAX_MUTATIONS) {
      this.metrics.rejected++;
      throw admissionRefused();
    }
    active++;
    this.metrics.active++;
    this.metrics.peak = Math.max(this.metrics.peak, this.metrics.active);
    let slot: Slot;
    try {
      slot = this.idleSlot();
    } catch (error) {
      this.release();
      throw error;
    }
    this.metrics.started++;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const request: MutationRequest = {
        id,
        dbPath,
        action,
        args,
        busyTimeoutMs: this.busyTimeoutMs,
        ...(this.maxPageCount === undefined ? {} : { maxPageCount: this.maxPageCount }),
      };
      try {
        // The hand-off copies `args` (structured clone): a value it cannot
        // copy throws here, before the worker saw anything — so the slot is
        // free again at once, never held by a mutation that does not exist.
        slot.worker.postMessage(request);
      } catch (error) {
        this.release();
        reject(
          contractError("internal_error", "the mutation could not be handed to its worker", {
            cause: error,
            status: 500,
          }),
        );
        return;
      }
      slot.current = { id, resolve, reject };
    });
  }

  /**
   * Take a slot and run an asynchronous mutation on this thread — a store
   * whose client never blocks (PostgreSQL) needs no worker. Admission and
   * release follow the same rules as `run`: refused at once when both slots
   * are taken, the slot held until the mutation's transaction has closed.
   */
  runAsync<T>(mutation: () => Promise<T>): Promise<T> {
    if (active >= MAX_MUTATIONS) {
      this.metrics.rejected++;
      throw admissionRefused();
    }
    active++;
    this.metrics.active++;
    this.metrics.peak = Math.max(this.metrics.peak, this.metrics.active);
    this.metrics.started++;
    let running: Promise<T>;
    try {
      running = mutation();
    } catch (error) {
      running = Promise.reject(error);
    }
    return running.finally(() => this.release());
  }

  private idleSlot(): Slot {
    const idle = this.slots.find((s) => s.current === undefined);
    if (idle !== undefined) return idle;
    const worker = new (workerThreads().Worker)(this.workerUrl);
    worker.unref();
    const slot: Slot = { worker };
    worker.on("message", (m: MutationResponse) => this.settle(slot, m));
    const fail = (why: string) => {
      // The worker is gone: whatever it ran ended with it, so its slot frees.
      // (`error` is followed by `exit`; only the first counts.)
      const index = this.slots.indexOf(slot);
      if (index < 0) return;
      this.slots.splice(index, 1);
      const current = slot.current;
      slot.current = undefined;
      if (current !== undefined) {
        this.release();
        current.reject(contractError("internal_error", `mutation worker ${why}`, { status: 500 }));
      }
    };
    worker.on("error", (e) => fail(`failed: ${e.message}`));
    worker.on("exit", (code) => fail(`exited (${code}) without a result`));
    this.slots.push(slot);
    return slot;
  }

  private settle(slot: Slot, m: MutationResponse): void {
    const current = slot.current;
    if (current === undefined || current.id !== m.id) return;
    slot.current = undefined;
    this.release();
    if (m.ok) current.resolve(m.result);
    else current.reject(contractError(m.error.code, m.error.message, { status: m.error.status }));
  }

  private release(): void {
    active--;
    this.metrics.active--;
    this.metrics.finished++;
    if (this.metrics.active === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Resolves when no mutation of this runner is in flight (a graceful stop
   * waits for this: a mutation is never interrupted). */
  idle(): Promise<void> {
    if (this.metrics.active === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stop the (idle) workers. */
  async close(): Promise<void> {
    await this.idle();
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
    this.slots.length = 0;
  }
}
