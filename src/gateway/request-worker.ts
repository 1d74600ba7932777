import { parentPort } from "node:worker_threads";
import { requestFacts } from "./request-facts.js";

// The gateway's worker thread: parses request bodies (possibly megabytes of
// conversation) off the thread that streams bytes, and answers with the few
// facts the events need.

parentPort?.on("message", (job: { id: number; body: Uint8Array }) => {
  let facts = {};
  try {
    facts = requestFacts(
      JSON.parse(
        Buffer.from(job.body.buffer, job.body.byteOffset, job.body.byteLength).toString("utf8"),
      ),
    );
  } catch {}
  parentPort?.postMessage({ id: job.id, facts });
});
