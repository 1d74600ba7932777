import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmdirSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { dirname } from "node:path";
import { writeFileAtomic } from "../../state/atomic-write.js";
import type { AllowRecord } from "./allow-rules.js";

// What an install puts on disk, planned before anything is written, and the
// receipt that lets uninstall take exactly that back. A file is either
// "owned" (ccmsg wrote all of it) or "merged" (the user's file, with ccmsg's
// part added). The receipt keeps each file's bytes from before the first
// install, so an uninstall of an untouched file restores it byte for byte; a
// merged file the user edited since has only ccmsg's part taken out.

export type Strategy = "owned" | "merged";

export interface Desired {
  path: string;
  strategy: Strategy;
  /** Unix mode for a file ccmsg creates (a merged file keeps its own). */
  mode: number;
  /** The content wanted, given what is there now. */
  content(current: string | undefined): string;
  /** A merged file without ccmsg's part; undefined: remove the file. */
  unmerge?(current: string): string | undefined;
}

export interface ReceiptFile {
  path: string;
  strategy: Strategy;
  /** base64 of the bytes before the first install; null: there was no file. */
  before: string | null;
  before_mode: number | null;
  /** sha256 of what the install wrote. */
  after: string;
}

export interface Receipt {
  harness: string;
  files: ReceiptFile[];
  /** Directories the install created, removed again when left empty. */
  dirs: string[];
  /** What was registered with the harness's own CLI. */
  registered?: Record<string, boolean>;
  /** Allow rules added to a settings file at the person's word (DR-0055). */
  allow_rules?: AllowRecord;
}

export type Action =
  | "create"
  | "update"
  | "unchanged"
  | "remove"
  | "restore"
  | "unmerge"
  | "keep"
  | "gone";

export interface Change {
  action: Action;
  path: string;
  detail?: string;
}

interface Write {
  path: string;
  /** undefined: remove the file. */
  content: Buffer | undefined;
  mode: number;
}

export interface Plan {
  changes: Change[];
  writes: Write[];
  mkdirs: string[];
  rmdirs: string[];
}

const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");

function read(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function modeOf(path: string): number | null {
  try {
    return statSync(path).mode & 0o7777;
  } catch {
    return null;
  }
}

/** The directories that writing `path` creates, outermost first. */
function missingDirs(path: string): string[] {
  const dirs: string[] = [];
  for (let dir = dirname(path); !existsSync(dir); dir = dirname(dir)) {
    dirs.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  return dirs;
}

/** Plan an install: what changes, and the receipt that records it. A file the
 * receipt already covers keeps its recorded "before" (a second install must
 * not take ccmsg's own output for the user's original). */
export function planInstall(
  harness: string,
  desired: Desired[],
  previous: Receipt | undefined,
): { plan: Plan; receipt: Receipt } {
  const plan: Plan = { changes: [], writes: [], mkdirs: [], rmdirs: [] };
  const files: ReceiptFile[] = [];
  const dirs = new Set(previous?.dirs ?? []);
  for (const d of desired) {
    const bytes = read(d.path);
    const next = d.content(bytes?.toString("utf8"));
    let known = previous?.files.find((f) => f.path === d.path);
    // A merged file edited since (by the person, or by the harness itself:
    // Codex writes its trust into config.toml) has a new "before": it
    // without ccmsg's part, so an uninstall never takes those edits back.
    if (known && bytes && d.unmerge && sha256(bytes) !== known.after) {
      const rest = d.unmerge(bytes.toString("utf8"));
      known = {
        ...known,
        before: rest === undefined ? null : Buffer.from(rest).toString("base64"),
      };
    }
    files.push({
      path: d.path,
      strategy: d.strategy,
      before: known ? known.before : bytes ? bytes.toString("base64") : null,
      before_mode: known ? known.before_mode : modeOf(d.path),
      after: sha256(next),
    });
    if (bytes?.equals(Buffer.from(next))) {
      plan.changes.push({ action: "unchanged", path: d.path });
      continue;
    }
    plan.changes.push({ action: bytes ? "update" : "create", path: d.path });
    for (const dir of missingDirs(d.path)) {
      if (!plan.mkdirs.includes(dir)) plan.mkdirs.push(dir);
      dirs.add(dir);
    }
    // A file that is ours alone takes our mode (hooks.json goes 0600 once it
    // holds the hook token); a merged one keeps its own.
    const mode = d.strategy === "owned" ? d.mode : (modeOf(d.path) ?? d.mode);
    plan.writes.push({ path: d.path, content: Buffer.from(next), mode });
  }
  // Files an older install placed and this one no longer writes stay recorded.
  for (const f of previous?.files ?? []) if (!files.some((g) => g.path === f.path)) files.push(f);
  const receipt: Receipt = { harness, files, dirs: [...dirs].sort() };
  if (previous?.registered) receipt.registered = previous.registered;
  if (previous?.allow_rules) receipt.allow_rules = previous.allow_rules;
  return { plan, receipt };
}

/** Plan an uninstall from the receipt. */
export function planUninstall(receipt: Receipt, desired: Desired[]): Plan {
  const plan: Plan = { changes: [], writes: [], mkdirs: [], rmdirs: [] };
  for (const f of receipt.files) {
    const bytes = read(f.path);
    const before = f.before === null ? undefined : Buffer.from(f.before, "base64");
    if (bytes === undefined) {
      plan.changes.push({ action: "gone", path: f.path, detail: "already removed" });
      continue;
    }
    if (sha256(bytes) === f.after) {
      plan.changes.push({ action: before ? "restore" : "remove", path: f.path });
      plan.writes.push({
        path: f.path,
        content: before,
        mode: f.before_mode ?? 0o644,
      });
      continue;
    }
    const unmerge = desired.find((d) => d.path === f.path)?.unmerge;
    if (f.strategy === "merged" && unmerge) {
      const current = bytes.toString("utf8");
      const rest = unmerge(current);
      if (rest === current) {
        plan.changes.push({ action: "unchanged", path: f.path, detail: "holds nothing of ccmsg" });
        continue;
      }
      plan.changes.push({
        action: rest === undefined ? "remove" : "unmerge",
        path: f.path,
        detail: "edited since install: only ccmsg's part is taken out",
      });
      plan.writes.push({
        path: f.path,
        content: rest === undefined ? undefined : Buffer.from(rest),
        mode: modeOf(f.path) ?? 0o644,
      });
      continue;
    }
    plan.changes.push({
      action: "keep",
      path: f.path,
      detail: "changed since install, so it is left as it is",
    });
  }
  plan.rmdirs = [...receipt.dirs].sort((a, b) => b.length - a.length);
  return plan;
}

/** Carry a plan out. Restored bytes are written as they were recorded. */
export function applyPlan(plan: Plan): void {
  for (const dir of plan.mkdirs) mkdirSync(dir, { recursive: true, mode: 0o755 });
  for (const w of plan.writes) {
    // Write through a symlink (a dotfiles manager's link stays a link).
    const target = realTarget(w.path);
    if (w.content === undefined) {
      unlinkSync(target);
      continue;
    }
    writeFileAtomic(target, w.content, w.mode);
    // The umask may have narrowed the mode: set it as recorded.
    chmodSync(target, w.mode);
  }
  pruneDirs(plan.rmdirs);
}

/** Remove the directories an install created, where nothing else is left in
 * them (deepest first). */
export function pruneDirs(dirs: string[]): void {
  for (const dir of dirs) {
    try {
      if (readdirSync(dir).length === 0) rmdirSync(dir);
    } catch {}
  }
}

function realTarget(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** Whether the plan changes anything on disk. */
export function changesSomething(plan: Plan): boolean {
  return plan.writes.length > 0 || plan.mkdirs.length > 0;
}

/** The receipt at `path`, or undefined when there is none (or it is torn). */
export function loadReceipt(path: string): Receipt | undefined {
  const bytes = read(path);
  if (bytes === undefined) return undefined;
  try {
    const value = JSON.parse(bytes.toString("utf8")) as Receipt;
    return Array.isArray(value.files) && Array.isArray(value.dirs) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Write the receipt when its bytes differ (a second install leaves it be). */
export function saveReceipt(path: string, receipt: Receipt): void {
  const text = `${JSON.stringify(receipt, null, 2)}\n`;
  if (read(path)?.equals(Buffer.from(text))) return;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  writeFileAtomic(path, text, 0o600);
}

export function removeReceipt(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}
