import pino, { type Logger } from "pino";

/** The instance log: JSON lines from a single writer, in order, to
 * `<state dir>/daemon.log`. Asynchronous so logging never blocks a request;
 * `close()` flushes, and a graceful stop waits for the last line. */
export function openLog(path: string | undefined): { log: Logger; close(): void } {
  if (path === undefined) return { log: pino({ level: "silent" }), close() {} };
  const dest = pino.destination({ dest: path, sync: false, mkdir: true });
  const log = pino(
    { base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.epochTime },
    dest,
  );
  return {
    log,
    close() {
      try {
        dest.flushSync();
      } catch {}
      dest.end();
    },
  };
}
