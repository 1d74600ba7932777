import { parentPort } from "node:worker_threads";
import { ContractError, type FailureCode } from "../contract/errors.js";
import { openStateStore } from "../store/migrated-store.js";
import type { StateStore } from "../store/state-store.js";
import { claimWorkItem, moveWorkItem, upsertWorkItem } from "./board.js";
import { applySync, recordSyncFailure, type SyncResult } from "./sync/apply.js";

/** What the runner sends: one mutation against one database. */
export interface MutationRequest {
  id: number;
  dbPath: string;
  /** `sync` writes one board sync's result (one transaction); `sync-failed`
   * records a sync that could not read its source. */
  action: "claim" | "move" | "upsert" | "sync" | "sync-failed";
  args: Record<string, unknown>;
  busyTimeoutMs?: number;
  /** Test hook (`/_test/disk-full`): the file may not grow past this many
   * pages, as on a full disk. */
  maxPageCount?: number;
}

/** What the worker answers, only after the mutation's transaction closed. A
 * failure crosses the thread as the plain fields of its `ContractError`
 * (anything else became `internal_error`, 500); the runner rebuilds it. */
export type MutationResponse =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: { message: string; code: FailureCode; status?: number } };

// A long-lived mutation worker: it keeps one store per database open and runs
// one mutation at a time, each as one transaction. It is never terminated
// while a mutation runs, so a write is never cut off halfway.
const stores = new Map<string, StateStore>();

parentPort!.on("message", (m: MutationRequest) => {
  let response: MutationResponse;
  try {
    let store = stores.get(m.dbPath);
    if (store === undefined) {
      store = openStateStore(m.dbPath, { busyTimeoutMs: m.busyTimeoutMs });
      stores.set(m.dbPath, store);
    }
    if (m.maxPageCount !== undefined) store.db.pragma(`max_page_count = ${m.maxPageCount}`);
    const a = m.args;
    const result =
      m.action === "claim"
        ? claimWorkItem(store, a as never)
        : m.action === "move"
          ? moveWorkItem(store, a.id as string, a.lane)
          : m.action === "sync"
            ? applySync(store, a as unknown as SyncResult)
            : m.action === "sync-failed"
              ? recordSyncFailure(store, a as never)
              : upsertWorkItem(store, a as never);
    response = { id: m.id, ok: true, result };
  } catch (error) {
    const known = error instanceof ContractError;
    response = {
      id: m.id,
      ok: false,
      error: {
        message: String((error as { message?: unknown })?.message ?? error).slice(0, 1024),
        code: known ? error.code : "internal_error",
        status: known ? error.status : 500,
      },
    };
  }
  parentPort!.postMessage(response);
});
