import { callAs, connectInstance } from "../client/connect.js";
import type { Flags } from "../client/flags.js";
import { ContractError } from "../contract/errors.js";
import { DEFAULT_TMUX_SESSION } from "../harness/launch.js";
import { launchResume, resumeCommand } from "../harness/resume.js";
import { controlFacts, withSessionContext } from "../hud/session-context.js";
import type { RunResult } from "../probes/exec.js";
import { addWorktree, type GitFacts, git } from "../probes/git.js";
import { gh, probeGh } from "../probes/github.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";
import { requireControl } from "./require-control.js";
import { sidArg } from "./sid-args.js";

const USAGE =
  "ccmsg session diff|pr|stop [<sid>] [--force] [--reason r]|resume [<sid>]|create <name> [--base ref] [--sid s]";

/** Commands a person runs and waits for: longer than the HUD's probes. */
const COMMAND_TIMEOUT_MS = 60_000;

/** `ccmsg session …` — the HUD's session controls, carried out. Each asks
 * controls.ts first, so it refuses exactly when the HUD lists it blocked. */
export const session: Command = async (argv) => {
  const parsed = parse(
    argv,
    { base: { type: "string" }, reason: { type: "string" }, force: { type: "boolean" } },
    USAGE,
  );
  const [sub, ...rest] = parsed.positionals;
  if (!["diff", "pr", "stop", "resume", "create"].includes(sub ?? ""))
    throw new ContractError("invalid_args", `usage: ${USAGE}`);
  // `stop <sid>` and `resume <sid>` name their session like `--sid`.
  const named = (sub === "stop" || sub === "resume") && rest.length > 0;
  if (named && (rest.length > 1 || parsed.values.sid !== undefined))
    throw new ContractError("invalid_args", `usage: ${USAGE}`);
  const typed = named ? rest[0] : parsed.values.sid;
  // A session to resume has ended: of a live and an ended match, the ended.
  const target =
    typed === undefined || typed === ""
      ? typed
      : await sidArg(parsed.values, typed, "the session", sub === "resume" ? "ended" : "live");
  const values = { ...parsed.values, sid: target };
  return withSessionContext(values, async (ctx, probe) => {
    const facts = controlFacts(ctx, probe);
    // Below, `probe as GitFacts` follows a requireControl that refuses every
    // control needing git unless git answered.
    switch (sub) {
      case "diff": {
        requireControl("diff", facts);
        const r = await diff(probe as GitFacts);
        return print(values, r, () =>
          [
            r.stat.trimEnd() || "no changes",
            r.diff.trimEnd(),
            ...r.untracked.map((u) => `untracked: ${u}`),
          ]
            .filter((l) => l !== "")
            .join("\n"),
        );
      }
      case "pr": {
        requireControl("pr", {
          ...facts,
          gh: probe.state === "ok" ? await probeGh(probe.toplevel) : undefined,
        });
        const pr = await viewPr(probe as GitFacts);
        return print(values, pr, () => {
          const p = pr as Record<string, unknown>;
          return `#${p.number} ${p.title} (${p.state}${p.isDraft ? ", draft" : ""})\n${p.url}\nmerge state: ${p.mergeStateStatus ?? "unknown"}, review: ${p.reviewDecision || "none"}`;
        });
      }
      case "stop": {
        requireControl("stop", facts);
        const sid = ctx.target.sid!;
        return facts.caller === sid ? stopItself(values, sid) : stopOther(values, sid);
      }
      case "resume": {
        requireControl("resume", facts);
        const harness = facts.harness === "codex" ? "codex" : "claude";
        const cmd = resumeCommand(harness, ctx.target.sid!, ctx.target.cwd, ctx.env);
        const tmuxSession = ctx.config.launcher?.tmux_session ?? DEFAULT_TMUX_SESSION;
        const launch = await launchResume(cmd, tmuxSession, ctx.env);
        return print(values, { ...cmd, ...launch }, () =>
          launch.launched
            ? `resumed ${cmd.sid} in tmux window ${launch.window} (pane ${launch.terminal_id})`
            : `could not open a tmux window (${launch.why}); run:\n${cmd.command}`,
        );
      }
      case "create": {
        requireControl("create", facts);
        const [name, ...extra] = rest;
        if (name === undefined || extra.length > 0)
          throw new ContractError("invalid_args", `usage: ${USAGE}`);
        const r = await createWorktree(probe as GitFacts, name, values.base);
        return print(values, r, () => r.path);
      }
      default:
        throw new ContractError("invalid_args", `usage: ${USAGE}`);
    }
  });
};

type StopFlags = Flags & { reason?: string; force?: boolean };

/** Run inside the session itself: it declares that it is done (DR-0029) —
 * its end then reads as a pause, and ECC's row as `completed` — rather than
 * signalling the harness that runs this very command. */
async function stopItself(values: StopFlags, sid: string): Promise<void> {
  // Nothing to declare to an instance that is not running: never start one.
  const client = await connectInstance(values, { start: false });
  try {
    const reason = values.reason;
    const r = await callAs(client, sid, "session_stopping", reason ? { reason } : {});
    return print(
      values,
      { sid, outcome: "completed", ...r },
      () =>
        `${sid} declared itself stopping (recorded at ${new Date(r.stopped_at as number).toISOString()})`,
    );
  } finally {
    client.close();
  }
}

/** Any other session: the instance signals its harness process, as the
 * person (SIGINT, then SIGTERM; `--force` adds SIGKILL). */
async function stopOther(values: StopFlags, sid: string): Promise<void> {
  const client = await connectInstance(values);
  try {
    const args = values.force ? { sid, force: true } : { sid };
    const { terminated } = await callAs(client, undefined, "session_kill", args);
    const out: Record<string, unknown> = {
      sid,
      terminated,
      outcome: terminated ? "stopped" : "running",
    };
    if (values.reason !== undefined) out.reason = values.reason;
    return print(values, out, () =>
      terminated
        ? `${sid} stopped`
        : `${sid} was signalled and still runs${values.force ? "" : " (--force kills it)"}`,
    );
  } finally {
    client.close();
  }
}

function failed(what: string, r: RunResult): ContractError {
  const why = r.failure === "timeout" ? "timed out" : r.stderr.trim() || `exit ${r.code}`;
  return new ContractError("internal_error", `${what}: ${why}`);
}

/** `git diff --stat` and the diff of the worktree against HEAD (staged and
 * unstaged), plus the untracked files a diff does not show. */
async function diff(facts: GitFacts) {
  const cwd = facts.toplevel;
  const head = await git(cwd, ["rev-parse", "--verify", "-q", "HEAD"]);
  // Before the first commit, compare with git's empty tree.
  const base = head.ok ? "HEAD" : "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
  const opts = { timeoutMs: COMMAND_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 };
  const [stat, patch, status] = await Promise.all([
    git(cwd, ["diff", "--stat", base], opts),
    git(cwd, ["diff", base], opts),
    git(cwd, ["status", "--porcelain=v2", "--untracked-files=all"], opts),
  ]);
  if (!stat.ok) throw failed("diff", stat);
  if (!patch.ok) throw failed("diff", patch);
  const untracked = status.ok
    ? status.stdout
        .split("\n")
        .filter((l) => l.startsWith("? "))
        .map((l) => l.slice(2))
    : [];
  return { worktree: cwd, branch: facts.branch, stat: stat.stdout, diff: patch.stdout, untracked };
}

async function viewPr(facts: GitFacts): Promise<unknown> {
  const fields =
    "number,title,state,url,isDraft,mergeStateStatus,reviewDecision,headRefName,baseRefName";
  const r = await gh(
    facts.toplevel,
    ["pr", "view", "--json", fields],
    process.env,
    COMMAND_TIMEOUT_MS,
  );
  if (!r.ok) {
    if (/no (open )?pull requests? found/i.test(r.stderr))
      throw new ContractError("not_found", `pr: no pull request for branch ${facts.branch}`);
    throw failed("pr", r);
  }
  try {
    return JSON.parse(r.stdout) as unknown;
  } catch {
    throw new ContractError("internal_error", "pr: gh printed something other than JSON");
  }
}

/** A new worktree on a new branch `<name>`, beside the repository's main
 * worktree as `<root>-<name>`, branched from this worktree's HEAD (or `base`). */
async function createWorktree(facts: GitFacts, name: string, base: string | undefined) {
  const r = await addWorktree(facts, name, base);
  if (!r.ok)
    throw new ContractError(r.invalid ? "invalid_args" : "internal_error", `create: ${r.why}`);
  return { path: r.path, branch: name, base: base ?? facts.branch ?? "HEAD" };
}
