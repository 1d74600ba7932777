/**
 * The instance's single clock. Every instant the instance stamps or compares
 * (sent_at, stopped_at, retention) is read here, so a test can move time
 * forward instead of sleeping (scenario rig: "the instance has a single
 * injectable clock").
 */
export class Clock {
  constructor(private offsetMs = 0) {}

  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** Test hook: move time forward. */
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}
