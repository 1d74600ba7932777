/** The four HTTP-carried auth ops share one bucket per client address:
 * this many requests at once, refilled at `RATE_PER_S`. */
export const RATE_BURST = 60;
export const RATE_PER_S = 2;

/** At most this many addresses are remembered. */
export const RATE_ADDRESSES = 10_000;

export interface RateLimitOptions {
  now?: () => number;
  /** At most this many addresses are remembered (default RATE_ADDRESSES). */
  addresses?: number;
}

/** A token bucket per client address (the auth routes' rate limit). */
export class RateLimit {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly now: () => number;
  private readonly cap: number;

  constructor(options: RateLimitOptions = {}) {
    this.now = options.now ?? Date.now;
    this.cap = options.addresses ?? RATE_ADDRESSES;
  }

  /** Take one token for `ip`: undefined when taken, else the seconds until
   * one is there. */
  take(ip: string): number | undefined {
    const now = this.now();
    const b = this.buckets.get(ip) ?? { tokens: RATE_BURST, at: now };
    b.tokens = Math.min(RATE_BURST, b.tokens + ((now - b.at) / 1000) * RATE_PER_S);
    b.at = now;
    this.buckets.set(ip, b);
    if (this.buckets.size > this.cap) this.buckets.clear();
    if (b.tokens < 1) return Math.ceil((1 - b.tokens) / RATE_PER_S);
    b.tokens -= 1;
    return undefined;
  }
}
