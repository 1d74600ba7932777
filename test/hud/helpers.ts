import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { HudStatus, hudRuleViolations } from "../../src/contract/ecc/hud.js";
import { validationErrors } from "../../src/contract/validate.js";
import { onPath } from "../../src/probes/exec.js";
import { afterEachFile } from "../helpers/after-file.js";
import { runCli } from "../helpers/instance.js";

// Real git repositories, fake `gh` / `claude` executables and a CLI runner
// with a chosen cwd and PATH, for the HUD tests.

// Made as a file needs them and removed after it: the files share one
// module graph (vitest.config.ts), so a home made when this module loads
// would be gone for every file after the first.
const dirs = new Set<string>();
let home: string | undefined;
afterEachFile(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
  home = undefined;
});

export function tempDir(prefix = "ccmsg-hud-"): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.add(d);
  return d;
}

/** git with no user or system configuration, fixed identity. */
export function gitEnv(): NodeJS.ProcessEnv {
  home ??= tempDir("ccmsg-hud-home-");
  return {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_AUTHOR_NAME: "Test",
    GIT_AUTHOR_EMAIL: "test@example.invalid",
    GIT_COMMITTER_NAME: "Test",
    GIT_COMMITTER_EMAIL: "test@example.invalid",
  };
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-C", cwd, ...args], {
    env: gitEnv(),
    encoding: "utf8",
    stdio: "pipe",
  });
}

/** Like `git`, for commands expected to fail (a merge that conflicts). */
export function gitMayFail(cwd: string, ...args: string[]): void {
  try {
    git(cwd, ...args);
  } catch {}
}

/** A repository on `main` with one commit and `origin` at acme/widgets. */
export function makeRepo(parent = tempDir(), name = "widgets"): string {
  const repo = join(parent, name);
  mkdirSync(repo, { recursive: true });
  git(repo, "init", "-q", "-b", "main");
  writeFileSync(join(repo, "README.md"), "widgets\n");
  writeFileSync(join(repo, "f.txt"), "base\n");
  git(repo, "add", ".");
  git(repo, "commit", "-q", "-m", "initial");
  git(repo, "remote", "add", "origin", "git@github.com:acme/widgets.git");
  return repo;
}

/** Put a merge conflict on f.txt into `repo` (branch `other` vs `main`). */
export function conflict(repo: string, branch = "other"): void {
  const current = git(repo, "rev-parse", "--abbrev-ref", "HEAD").trim();
  git(repo, "checkout", "-q", "-b", branch);
  writeFileSync(join(repo, "f.txt"), "theirs\n");
  git(repo, "commit", "-q", "-am", "theirs");
  git(repo, "checkout", "-q", current);
  writeFileSync(join(repo, "f.txt"), "ours\n");
  git(repo, "commit", "-q", "-am", "ours");
  gitMayFail(repo, "merge", branch);
}

/** A directory holding links to the named real executables only: a PATH on
 * which everything else (gh, claude) is absent. */
export function toolsDir(names: string[], dir = tempDir("ccmsg-bin-")): string {
  for (const name of names) {
    const real = onPath(name);
    if (real === undefined) throw new Error(`${name} is not installed`);
    symlinkSync(real, join(dir, name));
  }
  return dir;
}

/** An executable shell script in `dir`. */
export function script(dir: string, name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

export interface FakeGh {
  authenticated?: boolean;
  /** The branch's PR; undefined = "no pull requests found". */
  pr?: Record<string, unknown>;
  /** `gh pr checks --json` output and exit status (8 = pending). */
  checks?: { json: unknown; exit?: number };
  runs?: unknown[];
  prs?: number;
  issues?: number;
}

/** A fake `gh` that answers the calls ccmsg makes with canned JSON and logs
 * its arguments to `<dir>/gh.log`. */
export function fakeGh(dir: string, f: FakeGh): string {
  const data = join(dir, "gh-data");
  mkdirSync(data, { recursive: true });
  const put = (name: string, v: unknown) => writeFileSync(join(data, name), JSON.stringify(v));
  put("pr.json", f.pr ?? null);
  put("checks.json", f.checks?.json ?? []);
  put("runs.json", f.runs ?? []);
  put(
    "prs.json",
    Array.from({ length: f.prs ?? 0 }, (_, i) => ({ number: i + 1 })),
  );
  put(
    "issues.json",
    Array.from({ length: f.issues ?? 0 }, (_, i) => ({ number: i + 100 })),
  );
  const noPr = `echo 'no pull requests found for branch "'"$(git branch --show-current)"'"' >&2; exit 1`;
  script(
    dir,
    "gh",
    `echo "$*" >> "${dir}/gh.log"
case "$1 $2" in
  "auth status") ${f.authenticated === false ? 'echo "You are not logged into any GitHub hosts." >&2; exit 1' : 'echo "Logged in to github.com"; exit 0'} ;;
  "pr view") ${f.pr === undefined ? noPr : `cat "${data}/pr.json"`} ;;
  "pr checks") ${f.pr === undefined ? noPr : `cat "${data}/checks.json"; exit ${f.checks?.exit ?? 0}`} ;;
  "run list") cat "${data}/runs.json" ;;
  "pr list") cat "${data}/prs.json" ;;
  "issue list") cat "${data}/issues.json" ;;
  *) echo "fake gh: unexpected $*" >&2; exit 2 ;;
esac`,
  );
  return dir;
}

export function pathOf(...dirs: string[]): string {
  return dirs.join(delimiter);
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run the built CLI with `env` (whose PATH wins), in `cwd`. */
export function runIn(
  args: string[],
  env: Record<string, string | undefined>,
  options: { cwd?: string; stdin?: string; keepStdinOpen?: boolean } = {},
): Promise<CliResult> {
  return runCli(args, env, options.stdin, options);
}

/** Schema failures and rule violations of a HUD payload; empty when valid. */
export function hudProblems(payload: unknown): string[] {
  const schema = validationErrors(HudStatus, payload);
  return schema.length > 0 ? schema : hudRuleViolations(payload as HudStatus);
}

/** One of the three "missing" spellings, or an object made only of them. */
export function isMissing(v: unknown): boolean {
  if (v === null || v === "unknown") return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === "object") return Object.values(v as object).every(isMissing);
  return false;
}

export function stripAnsi(s: string): string {
  return s.replace(/\x1b\[[0-9;]*m/g, "");
}
