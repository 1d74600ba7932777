import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomicAsync } from "../../state/atomic-write.js";
import { type SessionLlm, sessionLlmDir } from "../../state/llm-session-file.js";
import type { Logger } from "../../util/logger.js";

/** A session's file is rewritten at most this often. */
const WRITE_EVERY_MS = 250;

/**
 * Writes each session's `llm-sessions/<sid>.json` (src/llm-session-file.ts)
 * for the statusline and the HUD: after an event about it, at most every
 * 250 ms, without blocking (a temp file, then a rename), 0600 in a 0700
 * directory. What goes in is computed at write time by `snapshot`.
 */
export class SessionFiles {
  private readonly dir: string;
  private readonly due = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private ready: Promise<unknown> | undefined;
  private closed = false;

  constructor(
    stateDir: string,
    private readonly snapshot: (sid: string) => SessionLlm,
    private readonly log: Logger,
  ) {
    this.dir = sessionLlmDir(stateDir);
  }

  touched(sid: string): void {
    if (this.closed) return;
    this.due.add(sid);
    this.timer ??= setTimeout(() => void this.flush(), WRITE_EVERY_MS);
  }

  private async flush(): Promise<void> {
    this.timer = undefined;
    const sids = [...this.due];
    this.due.clear();
    this.ready ??= mkdir(this.dir, { recursive: true, mode: 0o700 });
    try {
      await this.ready;
      await Promise.all(sids.map((sid) => this.write(sid)));
    } catch (error) {
      this.log.warn({ err: error }, "llm session files not written");
    }
  }

  private write(sid: string): Promise<void> {
    const path = join(this.dir, `${sid}.json`);
    return writeFileAtomicAsync(path, `${JSON.stringify(this.snapshot(sid))}\n`);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }
}
