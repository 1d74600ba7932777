import { parentPort, workerData } from "node:worker_threads";
import {
  compileSearch,
  type FoundSession,
  type SearchHarness,
  type SearchRequest,
  searchTranscripts,
} from "../../harness/transcript-search.js";

// One `session_search`, on its own thread (session-search.ts starts it): the
// walk and every regular expression run here, so a slow pattern or a large
// history never holds the instance's event loop. Each hit is posted as soon as
// it is found; the last message says whether the walk was cut short.

export interface SearchJob {
  harness: SearchHarness;
  home: string;
  request: SearchRequest;
  /** ms since the epoch. */
  deadline: number;
  now: number;
}

export type SearchMessage =
  | { kind: "hit"; hit: FoundSession }
  | { kind: "done"; truncated: boolean }
  | { kind: "error"; msg: string };

const job = workerData as SearchJob;
const post = (m: SearchMessage) => parentPort?.postMessage(m);
const compiled = compileSearch(job.request, job.now);
if (!compiled.ok) {
  post({ kind: "error", msg: compiled.why });
} else {
  try {
    const { truncated } = await searchTranscripts(
      job.harness,
      job.home,
      compiled.search,
      job.deadline,
      (hit) => post({ kind: "hit", hit }),
    );
    post({ kind: "done", truncated });
  } catch (error) {
    post({ kind: "error", msg: (error as Error).message });
  }
}
