import { statSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { ContractError } from "../../contract/errors.js";
import { compileSearch, type SearchRequest } from "../../harness/transcript-search.js";
import type { Db } from "../../store/database.js";
import { openSearchReader } from "../../store/search-index.js";
import { indexCaughtUp, runSearch, type SearchArgs } from "../../store/search-query.js";
import { indexedSessions } from "./sessions.js";

// Reads of the search index, on a thread of their own (search/engine.ts;
// DR-0037): an FTS5 query over a large index takes milliseconds to tens of
// them, and a pathological one longer — none of it on the instance's event
// loop. Questions are answered one at a time, in order; the engine ends this
// worker (and starts another) when one runs past its deadline.

export interface QueryJob {
  index: string;
}

/** What is asked. */
export type QueryQuestion =
  | { kind: "search"; args: SearchArgs }
  | { kind: "sessions"; request: SearchRequest; now: number; deadline: number };

export type QueryRequest = QueryQuestion & { id: number };

export type QueryReply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; code?: string; msg: string };

const job = workerData as QueryJob;
let db: Db | undefined;
let opened: string | undefined;

/** The index as it is on disk now: reopened when the file was replaced (a
 * rebuild), undefined while there is none. */
function reader(): Db | undefined {
  let identity: string | undefined;
  try {
    const st = statSync(job.index);
    identity = `${st.dev}:${st.ino}`;
  } catch {
    identity = undefined;
  }
  if (identity !== opened || db === undefined) {
    db?.close();
    db = identity === undefined ? undefined : openSearchReader(job.index);
    opened = db === undefined ? undefined : identity;
  }
  return db;
}

function answer(m: QueryRequest): unknown {
  const d = reader();
  if (m.kind === "search") {
    if (d === undefined) return { hits: [], more: false, indexing: true };
    return runSearch(d, m.args);
  }
  // Sessions: only an index that has read everything can stand in for the walk.
  if (d === undefined || !indexCaughtUp(d)) return undefined;
  const compiled = compileSearch(m.request, m.now);
  if (!compiled.ok) throw new ContractError("invalid_args", compiled.why);
  const terms = (m.request.query ?? "")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "")
    .map((l) => l.split(/\s+/));
  return indexedSessions(d, compiled.search, terms, m.deadline);
}

parentPort?.on("message", (m: QueryRequest) => {
  let reply: QueryReply;
  try {
    reply = { id: m.id, ok: true, result: answer(m) };
  } catch (error) {
    reply =
      error instanceof ContractError
        ? { id: m.id, ok: false, code: error.code, msg: error.message }
        : { id: m.id, ok: false, msg: (error as Error).message };
  }
  parentPort?.postMessage(reply);
});
