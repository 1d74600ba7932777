import { type FSWatcher, watch } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, dirname, relative, sep } from "node:path";

/**
 * A change counter for a directory the harness writes (`sessions/`,
 * `thread-writer-locks/`), so that a negative answer read from it can be
 * reused until something there changes. It watches the directory, or while
 * that does not exist its nearest existing ancestor (to see it appear), and
 * re-arms when the watched directory is replaced. `generation` moves on every
 * change and on every (re-)arming — changes at the instant a watch is armed
 * may be lost (harness.md §5.1), so nothing learnt before it counts. While no
 * watch is armed, `armed` is false and nothing may be reused.
 */
export class PathChanges {
  generation = 0;
  private watcher: FSWatcher | undefined;
  private watching: { dir: string; ino: number } | undefined;
  private checking = false;
  private again = false;

  constructor(private readonly target: string) {
    this.check();
  }

  get armed(): boolean {
    return this.watching !== undefined;
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.watching = undefined;
  }

  private changed(): void {
    this.generation++;
    this.check();
  }

  /** Re-arm when the deepest existing directory on the way to the target is
   * not the one watched (one check at a time; a change meanwhile asks for one more). */
  private check(): void {
    if (this.checking) {
      this.again = true;
      return;
    }
    this.checking = true;
    void this.arm().finally(() => {
      this.checking = false;
      if (this.again) {
        this.again = false;
        this.check();
      }
    });
  }

  private async arm(): Promise<void> {
    let dir = this.target;
    let ino: number | undefined;
    for (;;) {
      ino = await stat(dir).then(
        (s) => (s.isDirectory() ? s.ino : undefined),
        () => undefined,
      );
      if (ino !== undefined) break;
      const up = dirname(dir);
      if (up === dir) return this.close();
      dir = up;
    }
    if (this.watching?.dir === dir && this.watching.ino === ino) return;
    this.close();
    try {
      // Watching an ancestor, only the entry on the way to the target matters
      // (that ancestor may be busy with unrelated files).
      const next = dir === this.target ? undefined : relative(dir, this.target).split(sep)[0];
      const watcher = watch(dir, { persistent: false }, (_event, name) => {
        if (next === undefined || name === null || name === next || name === basename(dir))
          this.changed();
      });
      watcher.on("error", () => {
        if (this.watcher === watcher) this.close();
        this.generation++;
      });
      this.watcher = watcher;
      this.watching = { dir, ino };
    } catch {
      // No watch (inotify limits, permissions): every lookup reads afresh.
    }
    this.generation++;
  }
}
