import type { Db } from "./database.js";

/** One finished run of a configured local check. */
export interface CheckRun {
  repoRoot: string;
  name: string;
  command: string;
  status: "pass" | "fail" | "error";
  exitCode: number | null;
  durationMs: number;
  /** The last few KiB of the combined output, for "why did it fail". */
  outputTail: string;
  /** ISO-8601. */
  finishedAt: string;
}

interface Row {
  repo_root: string;
  name: string;
  command: string;
  status: CheckRun["status"];
  exit_code: number | null;
  duration_ms: number;
  output_tail: string;
  finished_at: string;
}

function toRun(r: Row): CheckRun {
  return {
    repoRoot: r.repo_root,
    name: r.name,
    command: r.command,
    status: r.status,
    exitCode: r.exit_code,
    durationMs: r.duration_ms,
    outputTail: r.output_tail,
    finishedAt: r.finished_at,
  };
}

/**
 * The check_runs table: every `ccmsg check run` result, appended. Readers want
 * the latest result per check of one repository, which the (repo_root, name,
 * id DESC) index answers without scanning older runs.
 */
export class CheckRunsStore {
  private readonly insert_;
  private readonly latest_;
  private readonly all_;

  constructor(db: Db) {
    this.insert_ = db.prepare(
      `INSERT INTO check_runs (repo_root, name, command, status, exit_code, duration_ms, output_tail, finished_at)
       VALUES (@repoRoot, @name, @command, @status, @exitCode, @durationMs, @outputTail, @finishedAt)`,
    );
    this.latest_ = db.prepare(
      `SELECT * FROM check_runs WHERE id IN
         (SELECT max(id) FROM check_runs WHERE repo_root = ? GROUP BY name)
       ORDER BY name`,
    );
    this.all_ = db.prepare("SELECT * FROM check_runs ORDER BY id");
  }

  /** Every run, oldest first (a copy to another store). */
  all(): CheckRun[] {
    return (this.all_.all() as Row[]).map(toRun);
  }

  record(run: CheckRun): void {
    this.insert_.run(run);
  }

  /** The most recent run of each check name in a repository, by name. */
  latestPerName(repoRoot: string): CheckRun[] {
    return (this.latest_.all(repoRoot) as Row[]).map(toRun);
  }
}
