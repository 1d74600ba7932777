import { type FSWatcher, statSync, watch } from "node:fs";
import { stat } from "node:fs/promises";
import type { Server } from "node:net";
import type { Logger } from "../../util/logger.js";
import type { Accept } from "./transport.js";
import { listenUnix } from "./uds.js";

/** How often the socket file is looked at when no change event came (a
 * filesystem without inotify, an event missed). */
const CHECK_MS = 2000;

export interface KeptSocket {
  /** Stop watching and close every listener (connections end first). */
  close(): Promise<void>;
}

/**
 * Listen on the local socket and keep its file there. A socket file deleted
 * (or replaced) while the instance runs would leave it unreachable — clients
 * find it only by that path — so when the file is gone or is no longer ours,
 * the instance listens again on a new one. Open connections are untouched.
 * The caller holds the single-instance lock: nobody else serves this path.
 */
export async function keepSocket(path: string, accept: Accept, log: Logger): Promise<KeptSocket> {
  let current: Server | undefined = await listenUnix(path, accept);
  const retired: Promise<void>[] = [];
  let inode = statSync(path).ino;
  let watcher: FSWatcher | undefined;
  let closed = false;
  let checking: Promise<void> | undefined;
  let failing = false;

  const watchFile = () => {
    watcher?.close();
    try {
      watcher = watch(path, { persistent: false }, check);
      watcher.on("error", () => {});
    } catch {
      watcher = undefined;
    }
  };
  const check = () => {
    if (closed || checking !== undefined) return;
    checking = relisten().finally(() => {
      checking = undefined;
    });
  };
  const relisten = async () => {
    try {
      const now = await stat(path).catch(() => undefined);
      if (closed || now?.ino === inode) return;
      // Close the old listener first: closing a Unix socket server removes
      // the file at its path, which would be the new one's.
      if (current !== undefined) retired.push(closeServer(current));
      current = undefined;
      current = await listenUnix(path, accept);
      inode = statSync(path).ino;
      if (closed) return;
      watchFile();
      failing = false;
      log.warn({ socket: path }, "the socket file was removed or replaced; listening again");
    } catch (error) {
      // Said once per failing spell; the timer keeps trying.
      if (!failing) log.error({ err: error, socket: path }, "could not listen again on the socket");
      failing = true;
    }
  };
  watchFile();
  const timer = setInterval(check, CHECK_MS);
  timer.unref();

  return {
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      watcher?.close();
      await checking;
      if (current !== undefined) retired.push(closeServer(current));
      await Promise.all(retired);
    },
  };
}

/** Stop accepting; resolves once the server's connections have ended. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}
