import type { LlmEvent } from "./event.js";

// How `ccmsg gateway` tells its instance what it saw: events queue in memory
// and go out in batches through the instance's webhook route, off the path
// that moves the model's bytes. A batch the instance cannot take is dropped
// (the events describe moments that pass; holding them would only delay the
// next), and the log says so once per outage.

/** Where batches go, found afresh after a failure (the instance may have
 * restarted on another port). */
export interface ReportTarget {
  url: string;
  token: string;
}

/** Held at most; past it the oldest are dropped. */
const MAX_QUEUED = 10_000;
/** Events per POST: far below the route's 1 MiB. */
const MAX_BATCH = 500;
/** Events arriving this close together share a POST. */
const BATCH_DELAY_MS = 50;

export class Reporter {
  private queue: LlmEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private target: Promise<ReportTarget | undefined> | undefined;
  private failing = false;
  /** Events dropped since the last report of it. */
  dropped = 0;
  /** Events delivered, for `--json` status and tests. */
  delivered = 0;

  constructor(
    private readonly find: () => Promise<ReportTarget | undefined>,
    private readonly warn: (msg: string) => void,
  ) {}

  add(event: LlmEvent): void {
    this.queue.push(event);
    if (this.queue.length > MAX_QUEUED) {
      this.dropped += this.queue.length - MAX_QUEUED;
      this.queue.splice(0, this.queue.length - MAX_QUEUED);
    }
    this.timer ??= setTimeout(() => void this.flush(), BATCH_DELAY_MS);
  }

  /** Send what is queued; resolves when the queue was handed over or dropped. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.sending !== undefined) await this.sending;
    if (this.queue.length === 0) return;
    this.sending = this.sendAll().finally(() => {
      this.sending = undefined;
    });
    await this.sending;
    if (this.queue.length > 0) this.timer ??= setTimeout(() => void this.flush(), BATCH_DELAY_MS);
  }

  private async sendAll(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.target ??= this.find();
      const target = await this.target;
      const ok = target !== undefined && (await post(target, batch));
      if (ok) {
        this.delivered += batch.length;
        if (this.failing) this.warn("reporting to the instance again");
        this.failing = false;
        continue;
      }
      this.target = undefined;
      this.dropped += batch.length;
      if (!this.failing)
        this.warn(
          target === undefined
            ? "no instance with an HTTP listener to report to: events dropped until one is found"
            : "the instance refused or missed a batch: events dropped",
        );
      this.failing = true;
    }
  }
}

async function post(target: ReportTarget, batch: LlmEvent[]): Promise<boolean> {
  try {
    const res = await fetch(target.url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${target.token}` },
      body: JSON.stringify(batch),
      signal: AbortSignal.timeout(5000),
    });
    await res.arrayBuffer();
    return res.status === 204;
  } catch {
    return false;
  }
}
