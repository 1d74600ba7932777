import { rmSync } from "node:fs";
import type { MutationRunner } from "../board/runner.js";
import { encodeEvent } from "../contract/frames.js";
import type { Logger } from "../util/logger.js";
import type { WorkItemsTopic } from "./board/work-items-topic.js";
import type { Dispatcher } from "./dispatch.js";
import type { Sessions } from "./sessions/sessions.js";
import type { InstanceStore } from "./store/instance-store.js";
import type { TopicHub } from "./topic-hub.js";
import type { Connection } from "./wire/connection.js";
import type { KeptSocket } from "./wire/socket-keeper.js";

/** What a stop takes down, in its order. */
export interface StopParts {
  id: string;
  log: Logger;
  dispatcher: Dispatcher;
  runner: MutationRunner;
  boardSync: { dispose(): void };
  /** Held permission hooks, answered "nothing decided" (DR-0062). */
  attention: { stop(): Promise<void> };
  board: WorkItemsTopic;
  /** The team board's connections (DR-0046), closed once no mutation runs. */
  teamBoard?: { close(): Promise<void> };
  store: InstanceStore;
  sessions: Sessions;
  presence: { dispose(): void };
  reservations: { dispose(): void };
  relay: { dispose(): void };
  transcripts: { dispose(): void };
  search: { close(): Promise<void> };
  llm: { close(): void };
  hub: TopicHub;
  /** The mesh's links and dials (DR-0047). */
  mesh: { stop(): void };
  kvReplication?: { dispose(): void };
  connections: ReadonlySet<Connection>;
  uds: KeptSocket;
  http: { close(): Promise<void> } | undefined;
  /** Files that exist only while the instance runs (instance.json, socket). */
  runtimeFiles: readonly string[];
  /** Last: close the log and release the single-instance lock. */
  release(): Promise<void>;
}

/**
 * Graceful stop (scenario 21's order): refuse new requests and give running
 * ones up to 5 s; let a board mutation finish (never interrupted); tell every
 * connection `restarting`; flush pending writes; close HTTP (capped) and the
 * local socket last; release the lock only after every listener closed, so a
 * stopping instance never looks stopped. Runs once, whoever asks.
 */
export async function stopInstance(parts: StopParts, reason: string): Promise<void> {
  const { log } = parts;
  log.info({ reason }, "stopping");
  parts.dispatcher.stop();
  await parts.dispatcher.idle(5000);
  await parts.attention.stop().catch((error) => log.warn({ err: error }, "attention stop"));
  parts.boardSync.dispose();
  await parts.runner.close();
  parts.board.dispose();
  await parts.teamBoard?.close().catch((error) => log.warn({ err: error }, "team board close"));
  const restarting = encodeEvent({ ev: "restarting", instance: parts.id });
  for (const conn of parts.connections) conn.send(restarting);
  parts.mesh.stop();
  parts.kvReplication?.dispose();
  parts.store.queue.flush();
  parts.presence.dispose();
  parts.reservations.dispose();
  parts.relay.dispose();
  parts.transcripts.dispose();
  // After the flush: the last messages reach the index before it closes.
  await parts.search.close();
  parts.sessions.close();
  parts.llm.close();
  parts.hub.dispose();
  for (const conn of parts.connections) conn.close();
  await Promise.race([parts.http?.close(), delay(250)]);
  await parts.uds.close();
  parts.store.db.close();
  for (const file of parts.runtimeFiles) {
    // Something else at the path (a directory) must not keep the lock held.
    try {
      rmSync(file, { force: true });
    } catch (error) {
      log.warn({ err: error, file }, "could not remove a runtime file");
    }
  }
  log.info({ reason }, "stopped");
  await parts.release();
}

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref());
}
