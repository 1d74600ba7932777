import { mkdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { sha256Hex } from "../util/sha256.js";
import { writeFileAtomicAsync } from "./atomic-write.js";
import { resolveStateDir } from "./paths.js";

/**
 * Mids a consumer showed to the model (or printed) although the instance's
 * answer to its confirmation never came — the instance went away between
 * recording them and replying, or before recording them (DR-0050). Which of
 * the two is unknowable from here, so they are shown once and written down:
 * offered again after a restart (same mids), the next consumer confirms them
 * without showing them twice. Kept per session in `<state dir>/shown/`, a
 * handful of mids at most, removed once the instance confirms them. Read by
 * the client's hooks and by the instance's hook route (DR-0058), so nothing
 * here blocks.
 */
export class ShownLedger {
  constructor(private readonly file: string) {}

  static of(flags: { "state-dir"?: string }, sid: string): ShownLedger {
    const dir = join(resolveStateDir(flags["state-dir"]), "shown");
    const name = sha256Hex(sid).slice(0, 32);
    return new ShownLedger(join(dir, `${name}.json`));
  }

  async mids(): Promise<Set<string>> {
    try {
      const parsed = JSON.parse(await readFile(this.file, "utf8")) as unknown;
      return new Set(Array.isArray(parsed) ? parsed.filter((m) => typeof m === "string") : []);
    } catch {
      return new Set();
    }
  }

  async add(mids: readonly string[]): Promise<void> {
    if (mids.length === 0) return;
    const all = await this.mids();
    for (const m of mids) all.add(m);
    await mkdir(join(this.file, ".."), { recursive: true, mode: 0o700 });
    await writeFileAtomicAsync(this.file, JSON.stringify([...all]));
  }

  async remove(mids: readonly string[]): Promise<void> {
    if (mids.length === 0) return;
    const all = await this.mids();
    if (!mids.some((m) => all.delete(m))) return;
    if (all.size > 0) await writeFileAtomicAsync(this.file, JSON.stringify([...all]));
    else await unlink(this.file).catch(() => {});
  }
}
