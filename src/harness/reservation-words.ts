import { isAbsolute, relative } from "node:path";
import type { KeyedReservation, Reservation } from "../contract/reservations.js";

// How a file reservation (DR-0041) reads to a person or a model: the CLI's
// commands and the PreToolUse answer (hook-answers.ts) say it the same way.

/** A glob for people to read: relative to `cwd` when below it (absolute
 * without one). */
export function shown(glob: string, cwd: string | undefined): string {
  if (cwd === undefined) return glob;
  const rel = relative(cwd, glob);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel) ? rel : glob;
}

function holderText(r: Reservation): string {
  const who = r.holder.sid === null ? "the person" : `session ${r.holder.sid}`;
  return r.holder.name === undefined ? who : `${r.holder.name} (${who})`;
}

function untilText(at: number, now: number): string {
  const secs = Math.max(1, Math.round((at - now) / 1000));
  const left =
    secs < 90
      ? `${secs} s`
      : secs < 5400
        ? `${Math.round(secs / 60)} min`
        : `${Math.round(secs / 3600)} h`;
  return `${new Date(at).toISOString()} (in ${left})`;
}

/** One line per reservation: its glob, holder, kind, expiry and reason. */
export function describe(r: Reservation, now: number, cwd?: string): string {
  const kind = r.exclusive ? "exclusive" : "shared";
  const why = r.reason === undefined ? "" : ` — ${r.reason}`;
  return `${shown(r.glob, cwd)}: ${kind}, held by ${holderText(r)} until ${untilText(r.expires_at, now)}${why}`;
}

export function uniqueByKey(list: KeyedReservation[]): KeyedReservation[] {
  return [...new Map(list.map((r) => [r.key, r])).values()];
}
