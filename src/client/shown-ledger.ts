import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic } from "../state/atomic-write.js";
import { resolveStateDir } from "../state/paths.js";
import type { Flags } from "./flags.js";

/**
 * Mids a consumer showed to the model (or printed) although the instance's
 * answer to its confirmation never came — the instance went away between
 * recording them and replying, or before recording them (DR-0050). Which of
 * the two is unknowable from here, so they are shown once and written down:
 * offered again after a restart (same mids), the next consumer confirms them
 * without showing them twice. Kept per session in `<state dir>/shown/`, a
 * handful of mids at most, removed once the instance confirms them.
 */
export class ShownLedger {
  constructor(private readonly file: string) {}

  static of(flags: Flags, sid: string): ShownLedger {
    const dir = join(resolveStateDir(flags["state-dir"]), "shown");
    const name = createHash("sha256").update(sid).digest("hex").slice(0, 32);
    return new ShownLedger(join(dir, `${name}.json`));
  }

  mids(): Set<string> {
    try {
      const parsed = JSON.parse(readFileSync(this.file, "utf8")) as unknown;
      return new Set(Array.isArray(parsed) ? parsed.filter((m) => typeof m === "string") : []);
    } catch {
      return new Set();
    }
  }

  add(mids: readonly string[]): void {
    if (mids.length === 0) return;
    const all = this.mids();
    for (const m of mids) all.add(m);
    mkdirSync(join(this.file, ".."), { recursive: true, mode: 0o700 });
    writeFileAtomic(this.file, JSON.stringify([...all]));
  }

  remove(mids: readonly string[]): void {
    const all = this.mids();
    if (!mids.some((m) => all.delete(m))) return;
    if (all.size > 0) writeFileAtomic(this.file, JSON.stringify([...all]));
    else
      try {
        unlinkSync(this.file);
      } catch {}
  }
}
