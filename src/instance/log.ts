import type { Logger, LogMethod } from "../util/logger.js";
import { LOG_FILE_LIMITS, LogFile, type LogFileLimits } from "./log-file.js";

/** What one log record may carry: a client chooses many of the values
 * (a stop reason, an op's arguments in an error), so each is cut here. */
export const LOG_RECORD_LIMITS = {
  /** Characters kept of one string; the rest is replaced by a count. */
  string: 2048,
  /** Characters of strings and keys in one record, all fields together. */
  record: 16 * 1024,
  /** Keys of an object, elements of an array. */
  items: 32,
  /** Levels of nesting below the record. */
  depth: 4,
};

/** Lines with the same message per second; the rest are counted and
 * summed up in one line when the second ends. */
export const REPEATS_PER_SECOND = 100;

/** The numbers a line's `level` carries (the usual JSON-log scale, as
 * pino and bunyan write it, so their viewers read daemon.log). */
const LEVELS = { info: 30, warn: 40, error: 50 } as const;

/**
 * The instance log: JSON lines, in order, to `<state dir>/daemon.log`,
 * rotated by size (`LOG_FILE_LIMITS`). A line is
 * `{"level":30,"time":<epoch ms>,"pid":…,<fields>,"msg":"…"}`. Logging can
 * never stop the instance: records are bounded, repeats are limited, and a
 * file that cannot be written loses lines (counted, reported once writing
 * works again) instead of blocking or throwing. Nothing is opened until the
 * first line. `close()` writes what is queued, never waiting long.
 */
export function openLog(
  path: string,
  limits: Partial<LogFileLimits> = {},
): { log: Logger; close(): Promise<void> } {
  const file = new LogFile(path, droppedNotice, { ...LOG_FILE_LIMITS, ...limits });
  const repeats = new RepeatLimiter((suppressed) =>
    log.warn({ suppressed }, "repeated log lines suppressed"),
  );
  const at =
    (level: keyof typeof LEVELS): LogMethod =>
    (fieldsOrMsg, msg) => {
      const fields = typeof fieldsOrMsg === "string" ? {} : fieldsOrMsg;
      const text = typeof fieldsOrMsg === "string" ? fieldsOrMsg : msg;
      if (repeats.allow(text ?? "")) file.write(formatLine(LEVELS[level], fields, text));
    };
  const log: Logger = { info: at("info"), warn: at("warn"), error: at("error") };
  return {
    log,
    async close() {
      repeats.flush();
      await file.close();
    },
  };
}

/** One record as its line. The fields are bounded first, so a getter that
 * throws or a value JSON cannot write costs the fields, never the line. */
function formatLine(level: number, fields: object, msg: string | undefined): string {
  const head = { level, time: Date.now(), pid: process.pid };
  try {
    return `${JSON.stringify({ ...head, ...boundRecord(fields as Record<string, unknown>), msg })}\n`;
  } catch (error) {
    return `${JSON.stringify({ ...head, unwritable: String(error), msg })}\n`;
  }
}

/** The line that stands for lines a failing file lost. */
function droppedNotice(dropped: number): string {
  const record = { level: 40, time: Date.now(), pid: process.pid, dropped };
  return `${JSON.stringify({ ...record, msg: "log lines dropped (the log could not be written)" })}\n`;
}

/** A copy of a record with every string, object and array cut to
 * `LOG_RECORD_LIMITS`; errors become plain fields (type, message, stack…). */
export function boundRecord(record: Record<string, unknown>): Record<string, unknown> {
  const budget = { left: LOG_RECORD_LIMITS.record };
  return bound(record, 0, budget) as Record<string, unknown>;
}

function bound(value: unknown, depth: number, budget: { left: number }): unknown {
  if (typeof value === "string") return clip(value, budget);
  if (typeof value === "bigint") return value.toString();
  if (typeof value !== "object" || value === null) return value;
  if (value instanceof Error) value = errorFields(value);
  else if (typeof (value as { toJSON?: unknown }).toJSON === "function")
    return bound((value as { toJSON(): unknown }).toJSON(), depth, budget);
  if (depth > LOG_RECORD_LIMITS.depth || budget.left <= 0) return "[…]";
  const max = LOG_RECORD_LIMITS.items;
  if (Array.isArray(value)) {
    const out = value.slice(0, max).map((v) => bound(v, depth + 1, budget));
    if (value.length > max) out.push(`…(+${value.length - max} items)`);
    return out;
  }
  const out: Record<string, unknown> = {};
  const keys = Object.keys(value as object);
  for (const key of keys.slice(0, max)) {
    out[clip(key, budget)] = bound((value as Record<string, unknown>)[key], depth + 1, budget);
  }
  if (keys.length > max) out["…"] = `+${keys.length - max} keys`;
  return out;
}

function clip(s: string, budget: { left: number }): string {
  const room = Math.max(0, Math.min(LOG_RECORD_LIMITS.string, budget.left));
  budget.left -= Math.min(s.length, room);
  return s.length <= room ? s : `${s.slice(0, room)}…(+${s.length - room} chars)`;
}

function errorFields(error: Error): Record<string, unknown> {
  const fields: Record<string, unknown> = { type: error.constructor?.name ?? error.name };
  fields.message = error.message;
  fields.stack = error.stack;
  for (const [k, v] of Object.entries(error)) fields[k] ??= v;
  if (error.cause !== undefined) fields.cause = error.cause;
  return fields;
}

/** At most `REPEATS_PER_SECOND` lines per message per second. */
class RepeatLimiter {
  private windowStart = 0;
  private counts = new Map<string, number>();
  private suppressed: Record<string, number> = {};
  private anySuppressed = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly report: (suppressed: Record<string, number>) => void) {}

  allow(msg: string): boolean {
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.flush();
      this.windowStart = now;
    }
    const n = (this.counts.get(msg) ?? 0) + 1;
    if (n <= REPEATS_PER_SECOND) {
      if (this.counts.size < 1000 || this.counts.has(msg)) this.counts.set(msg, n);
      return true;
    }
    const key = msg.slice(0, 200);
    this.suppressed[key] = (this.suppressed[key] ?? 0) + 1;
    if (!this.anySuppressed) {
      this.anySuppressed = true;
      this.timer = setTimeout(() => this.flush(), this.windowStart + 1000 - now);
      this.timer.unref();
    }
    return false;
  }

  /** Report what was suppressed (one line) and start a new window. */
  flush(): void {
    clearTimeout(this.timer);
    this.counts.clear();
    if (!this.anySuppressed) return;
    const suppressed = this.suppressed;
    this.suppressed = {};
    this.anySuppressed = false;
    this.windowStart = Date.now();
    this.report(suppressed);
  }
}
