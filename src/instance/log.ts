import pino, { type Logger } from "pino";

/** The instance log: JSON lines from a single writer, in order, to
 * `<state dir>/daemon.log`. Asynchronous so logging never blocks a request;
 * `close()` resolves once every line is written — a graceful stop waits for
 * the last line, even when it comes before the file finished opening. */
export function openLog(path: string | undefined): { log: Logger; close(): Promise<void> } {
  if (path === undefined) return { log: pino({ level: "silent" }), close: async () => {} };
  const dest = pino.destination({ dest: path, sync: false, mkdir: true });
  const log = pino(
    { base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.epochTime },
    dest,
  );
  const opened = new Promise<void>((resolve) => {
    if ((dest as unknown as { fd: number }).fd >= 0) resolve();
    else dest.once("ready", () => resolve());
  });
  return {
    log,
    async close() {
      await opened;
      await new Promise<void>((resolve) => {
        dest.once("close", () => resolve());
        dest.end();
      });
    },
  };
}
