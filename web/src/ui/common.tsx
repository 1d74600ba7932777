import type { ComponentChildren } from "preact";
import { BUSY_WINDOW_MS } from "../../../src/contract/busy.js";
import { busySids } from "../lib/sessions.js";
import { fullTime } from "../lib/time.js";

/** The busy mark `ccmsg peers` shows as ●: inference ran for the session just
 * now, as a gateway saw it (lib/sessions.ts `busySids`). Nothing when idle. */
export function BusyMark({ sid }: { sid: string }) {
  if (!busySids.value.has(sid)) return null;
  return (
    <span
      class="busy-mark"
      data-busy=""
      title={`Inference in flight or within the last ${BUSY_WINDOW_MS / 1000} s, as a gateway saw it`}
    >
      <span aria-hidden="true">● </span>busy
    </span>
  );
}

/** A marker that what is shown is the last known value, not a live one. */
export function StaleNote({ stale, what }: { stale: boolean; what: string }) {
  if (!stale) return null;
  return (
    <p class="stale-note" role="status">
      Not live: showing the last known {what} until the instance answers again.
    </p>
  );
}

/** A short mark; `label` is what a screen reader says instead of the mark. */
export function Badge(props: {
  tone?: "info" | "warn" | "bad" | "good" | "muted";
  children: ComponentChildren;
  label?: string;
}) {
  return (
    <span class={`badge badge-${props.tone ?? "info"}`}>
      {props.label === undefined ? (
        props.children
      ) : (
        <>
          <span aria-hidden="true">{props.children}</span>
          <span class="visually-hidden">{props.label}</span>
        </>
      )}
    </span>
  );
}

export function Time({ at, children }: { at: number; children: ComponentChildren }) {
  return (
    <time dateTime={new Date(at).toISOString()} title={fullTime(at)}>
      {children}
    </time>
  );
}

export function ErrorText({ error }: { error: string | undefined }) {
  if (error === undefined) return null;
  return (
    <p class="error-text" role="alert">
      {error}
    </p>
  );
}

/** What a refusal says, for a person: the contract code and its message. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: string }).code;
    return code !== undefined ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}
