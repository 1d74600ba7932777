/**
 * A WebSocket opened with a person's access token (contract §9.1, §9.5): it
 * closes at the token's deadline unless `auth_refresh` on the same connection
 * moves it, and when the person's access is revoked.
 */
export class PersonSession {
  private timer: NodeJS.Timeout | undefined;
  private expiresAt_: number;

  constructor(
    readonly sub: string,
    readonly familyId: string,
    expiresAt: number,
    private readonly now: () => number,
    private readonly end: (why: string) => void,
  ) {
    this.expiresAt_ = expiresAt;
    this.arm();
  }

  get expiresAt(): number {
    return this.expiresAt_;
  }

  /** Move the deadline (never back). */
  extend(expiresAt: number): void {
    if (expiresAt <= this.expiresAt_) return;
    this.expiresAt_ = expiresAt;
    this.arm();
  }

  close(why: string): void {
    this.dispose();
    this.end(why);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    clearTimeout(this.timer);
    // Checked against the instance clock when the timer fires, so a clock a
    // test moved is honoured; a long deadline is reached in steps.
    const wait = Math.min(Math.max(0, this.expiresAt_ - this.now()), 3_600_000);
    this.timer = setTimeout(() => {
      if (this.now() >= this.expiresAt_) this.close("access token expired");
      else this.arm();
    }, wait);
    this.timer.unref();
  }
}
