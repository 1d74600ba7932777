import type { Logger } from "pino";

type Level = "info" | "warn" | "error";
type Opened = { log: Logger; close(): Promise<void> };

export interface DeferredLog {
  /** Usable at once: records wait, in order, until the log is open. */
  log: Logger;
  /** Open the log (once); the waiting records are written then. */
  load(): Promise<void>;
  /** Open the log if nobody did, write what waits, close it. */
  close(): Promise<void>;
}

/**
 * The instance log, opened only after the socket answers: loading the logging
 * library is about a tenth of a restart (DR-0022), and until the socket
 * listens the instance has nothing to log but a failed start. The instance
 * calls only `info`, `warn` and `error`, so that is all this stands in for.
 */
export function deferredLog(open: () => Promise<Opened>): DeferredLog {
  let real: Logger | undefined;
  let failed = false;
  let opening: Promise<Opened | undefined> | undefined;
  const waiting: [Level, unknown[]][] = [];
  const load = () => {
    opening ??= open().then(
      (opened) => {
        real = opened.log;
        for (const [level, args] of waiting.splice(0)) write(real, level, args);
        return opened;
      },
      (error: unknown) => {
        // Never a reason to stop serving: say so once and log nothing.
        failed = true;
        waiting.length = 0;
        process.stderr.write(`ccmsg: the instance log could not be opened: ${String(error)}\n`);
        return undefined;
      },
    );
    return opening;
  };
  const at =
    (level: Level) =>
    (...args: unknown[]) => {
      if (real !== undefined) write(real, level, args);
      else if (!failed) waiting.push([level, args]);
    };
  const log = { info: at("info"), warn: at("warn"), error: at("error") } as unknown as Logger;
  return {
    log,
    load: async () => {
      await load();
    },
    close: async () => {
      await (await load())?.close();
    },
  };
}

function write(log: Logger, level: Level, args: unknown[]): void {
  (log[level] as (...a: unknown[]) => void)(...args);
}

/** The instance's `daemon.log`, opened later (see `deferredLog`); `maxBytes`
 * is the rotation size (a test may make it small). */
export function instanceLog(path: string, maxBytes?: number): DeferredLog {
  return deferredLog(() =>
    import("./log.js").then(({ openLog }) => openLog(path, maxBytes ? { maxBytes } : {})),
  );
}
