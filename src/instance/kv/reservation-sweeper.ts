import { parseReservation, RESERVATIONS_NS } from "../../contract/reservations.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { Kv } from "./kv.js";

/** setTimeout's longest delay (about 24.8 days); a later expiry re-arms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Removes expired file reservations (DR-0041) from KV namespace
 * `reservations`. One timer, armed for the earliest expiry: at start from the
 * namespace, then from every write that lands in it. Readers already ignore
 * expired entries; the sweep only stops them lingering in the store, in
 * `kv:reservations` and in replicas. A removal is stamped just after the
 * version it removes, so a renewal written elsewhere meanwhile still wins.
 */
export class ReservationSweeper {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private due = Number.POSITIVE_INFINITY;
  private disposed = false;

  constructor(
    private readonly kv: Kv,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {
    kv.onChange((ns, entry) => {
      if (ns !== RESERVATIONS_NS || !("value" in entry)) return;
      const r = parseReservation(entry.value);
      if (r !== undefined) this.arm(r.expires_at);
    });
    this.sweep();
  }

  private arm(at: number): void {
    if (this.disposed || at >= this.due) return;
    clearTimeout(this.timer);
    this.due = at;
    const delay = Math.min(Math.max(0, at - this.clock.now()), MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      this.due = Number.POSITIVE_INFINITY;
      this.sweep();
    }, delay);
    this.timer.unref();
  }

  /** Sweep now: the clock moved (test hook) past what the timer waits for. */
  expire(): void {
    this.sweep();
  }

  /** Remove what has expired and arm for the next expiry. */
  private sweep(): void {
    if (this.disposed) return;
    const now = this.clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const e of this.kv.list(RESERVATIONS_NS)) {
      if (!("value" in e)) continue;
      const r = parseReservation(e.value);
      if (r === undefined) continue;
      if (r.expires_at > now) {
        next = Math.min(next, r.expires_at);
        continue;
      }
      this.kv
        .delete(RESERVATIONS_NS, e.key, e.updated_at + 1)
        .catch((error: unknown) =>
          this.log.warn({ err: error, key: e.key }, "expired reservation not removed"),
        );
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.timer);
  }
}
