import { join } from "node:path";
import { UsageError } from "../client/flags.js";
import {
  DEFAULT_BASH_TIMEOUT_SECONDS,
  DEFAULT_WAKE_GRACE_MULTIPLIER,
} from "../harness/loop-signals.js";
import { loopStatus, loopStatusText, writeLoopStatus } from "../hud/loop-status.js";
import { claudeConfigHome, resolveStateDir, stateFiles } from "../state/paths.js";
import type { Command } from "./command.js";
import { parse, wantsJson } from "./options.js";

const USAGE =
  "ccmsg loop-status [--json] [--home d] [--transcript f …] [--limit n] [--bash-timeout-seconds n] [--wake-grace-multiplier n] [--now t] [--exit-code] [--watch] [--write-dir DIR]";

/** A number flag: `min` inclusive, integers only when asked. */
function numberFlag(
  name: string,
  value: string | undefined,
  fallback: number,
  { min = 0, integer = false, above = false } = {},
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || (above && n <= min))
    throw new UsageError(
      `--${name} must be ${integer ? "an integer" : "a number"} ${above ? ">" : "≥"} ${min}: ${value}`,
    );
  return n;
}

/** `--now`: an ISO time, epoch milliseconds, or `now`. */
function nowFlag(value: string | undefined): number {
  if (value === undefined || value === "now") return Date.now();
  const n = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (Number.isNaN(n))
    throw new UsageError(`--now must be an ISO time, epoch ms or "now": ${value}`);
  return n;
}

/** `ccmsg loop-status` — ECC's `ecc.loop-status.v1`: attention signals of
 * long-running sessions, from their transcripts. `--exit-code`: 1 when a
 * transcript could not be read, else 2 when a session needs attention. */
export const loopStatusCommand: Command = async (argv) => {
  const { values } = parse(
    argv,
    {
      home: { type: "string" },
      transcript: { type: "string", multiple: true },
      limit: { type: "string" },
      "bash-timeout-seconds": { type: "string" },
      "wake-grace-multiplier": { type: "string" },
      now: { type: "string" },
      "exit-code": { type: "boolean" },
      watch: { type: "boolean" },
      "watch-count": { type: "string" },
      "watch-interval-seconds": { type: "string" },
      "write-dir": { type: "string" },
    },
    USAGE,
  );
  const transcripts = (values.transcript as unknown as string[] | undefined) ?? [];
  const homeDir = values.home ?? null;
  const options = {
    homeDir,
    // `--home` is a user home (ECC's flag); otherwise the Claude Code config
    // home this process belongs to (CLAUDE_CONFIG_DIR honoured).
    transcriptRoot:
      homeDir !== null
        ? join(homeDir, ".claude", "projects")
        : join(claudeConfigHome(), "projects"),
    transcripts,
    limit: numberFlag("limit", values.limit, 10, { min: 1, integer: true }),
    bashTimeoutSeconds: numberFlag(
      "bash-timeout-seconds",
      values["bash-timeout-seconds"],
      DEFAULT_BASH_TIMEOUT_SECONDS,
    ),
    wakeGraceMultiplier: numberFlag(
      "wake-grace-multiplier",
      values["wake-grace-multiplier"],
      DEFAULT_WAKE_GRACE_MULTIPLIER,
    ),
    cacheDir: stateFiles(resolveStateDir(values["state-dir"])).foldCache,
  };
  const watch =
    values.watch === true ||
    values["watch-count"] !== undefined ||
    values["watch-interval-seconds"] !== undefined;
  const count = numberFlag("watch-count", values["watch-count"], Number.POSITIVE_INFINITY, {
    min: 1,
    integer: true,
  });
  const interval = numberFlag("watch-interval-seconds", values["watch-interval-seconds"], 5, {
    above: true,
  });
  const json = wantsJson(values);
  const fixedNow =
    values.now === undefined || values.now === "now" ? undefined : nowFlag(values.now);
  let code = 0;
  for (let run = 1; ; run++) {
    const status = await loopStatus({ ...options, now: fixedNow ?? Date.now() });
    if (values["write-dir"] !== undefined) writeLoopStatus(values["write-dir"], status);
    // A watch prints one JSON document per line; a single run, readably indented.
    process.stdout.write(
      json
        ? `${watch ? JSON.stringify(status) : JSON.stringify(status, null, 2)}\n`
        : `${loopStatusText(status)}\n`,
    );
    code =
      status.errors.length > 0 ? 1 : status.sessions.some((s) => s.state === "attention") ? 2 : 0;
    if (!watch || run >= count) break;
    await new Promise((r) => setTimeout(r, interval * 1000));
  }
  if (values["exit-code"]) process.exitCode = code;
};
