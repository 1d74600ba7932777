import { signal } from "@preact/signals";

/** The clock relative times are read against; ticks every 15 s so "2 min
 * ago" stays true without re-rendering on every frame. */
export const now = signal(Date.now());
setInterval(() => {
  now.value = Date.now();
}, 15_000);

export function ago(at: number | undefined, at_now: number): string {
  if (at === undefined) return "unknown";
  const s = Math.max(0, Math.round((at_now - at) / 1000));
  if (s < 45) return "just now";
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  if (h < 36) return `${h} h ago`;
  return `${Math.round(h / 24)} d ago`;
}

/** How long until `at`: "in 12 min". */
export function untilTime(at: number, at_now: number): string {
  const s = Math.max(0, Math.round((at - at_now) / 1000));
  if (s < 60) return "in under a minute";
  const m = Math.round(s / 60);
  if (m < 60) return `in ${m} min`;
  const h = Math.round(m / 60);
  if (h < 36) return `in ${h} h`;
  return `in ${Math.round(h / 24)} d`;
}

export function clockTime(at: number): string {
  return new Date(at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

export function fullTime(at: number): string {
  return new Date(at).toLocaleString();
}
