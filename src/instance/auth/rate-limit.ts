/** The four HTTP-carried auth ops share one bucket per client address:
 * this many requests at once, refilled at `RATE_PER_S`. */
export const RATE_BURST = 60;
export const RATE_PER_S = 2;

/** At most this many addresses are remembered. */
export const RATE_ADDRESSES = 10_000;
/** A full table is searched for refilled buckets at most this often. */
const SWEEP_EVERY_MS = 1000;

export interface RateLimitOptions {
  now?: () => number;
  /** At most this many addresses are remembered (default RATE_ADDRESSES). */
  addresses?: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * A token bucket per client address (the auth routes' rate limit), in a
 * bounded table that forgives nothing: only a bucket that has refilled — one
 * that is no different from a new one — is ever dropped. When every
 * remembered address is still in debt (a flood of forged addresses), the
 * addresses not in the table share one bucket until some refill, so no flood
 * of other addresses can buy a limited one a fresh burst.
 */
export class RateLimit {
  private readonly buckets = new Map<string, Bucket>();
  /** Shared by the addresses the full table has no room for. */
  private readonly overflow: Bucket = { tokens: RATE_BURST, at: 0 };
  private readonly now: () => number;
  private readonly cap: number;
  /** A full table is not searched again before this. */
  private sweepAt = 0;

  constructor(options: RateLimitOptions = {}) {
    this.now = options.now ?? Date.now;
    this.cap = options.addresses ?? RATE_ADDRESSES;
  }

  /** Take one token for `ip`: undefined when taken, else the seconds until
   * one is there. */
  take(ip: string): number | undefined {
    const now = this.now();
    const b = this.bucketOf(ip, now);
    b.tokens = Math.min(RATE_BURST, b.tokens + ((now - b.at) / 1000) * RATE_PER_S);
    b.at = now;
    if (b.tokens < 1) return Math.ceil((1 - b.tokens) / RATE_PER_S);
    b.tokens -= 1;
    return undefined;
  }

  private bucketOf(ip: string, now: number): Bucket {
    const known = this.buckets.get(ip);
    if (known !== undefined) return known;
    if (this.buckets.size >= this.cap) this.sweep(now);
    if (this.buckets.size >= this.cap) return this.overflow;
    const fresh = { tokens: RATE_BURST, at: now };
    this.buckets.set(ip, fresh);
    return fresh;
  }

  /** Drop the buckets that have refilled; the next search waits for the
   * first of the rest to refill (at least SWEEP_EVERY_MS). */
  private sweep(now: number): void {
    if (now < this.sweepAt) return;
    let next = Number.POSITIVE_INFINITY;
    for (const [ip, b] of this.buckets) {
      const fullAt = b.at + ((RATE_BURST - b.tokens) / RATE_PER_S) * 1000;
      if (fullAt <= now) this.buckets.delete(ip);
      else next = Math.min(next, fullAt);
    }
    this.sweepAt = Math.max(next, now + SWEEP_EVERY_MS);
  }
}
