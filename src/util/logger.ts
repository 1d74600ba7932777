/**
 * What code logs through: a record's fields, then its message, at one of
 * three levels. The instance's logger writes JSON lines to daemon.log
 * (`openLog`, src/instance/log.ts); code that runs outside an instance, and
 * tests, take `silentLogger`.
 */
export interface Logger {
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
}

/** `log.warn({ sid, err }, "what happened")`, or just `log.warn("what")`. */
export type LogMethod = (fieldsOrMsg: object | string, msg?: string) => void;

/** A logger that writes nothing. */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
