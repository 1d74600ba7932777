import { type Static, Type } from "@sinclair/typebox";
import { request, response } from "./envelope.js";
import { NonEmpty } from "./identifiers.js";

// The launcher (contract §4.3.5): starting a new session from a configured
// template. Parameters travel as shell variables, never as text spliced into
// the command, so a value can never become code.

/** A shell identifier, because each parameter arrives as a variable of that
 * name. */
export const SHELL_IDENTIFIER_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*$";

export const LauncherParam = Type.Object({
  name: Type.String({
    minLength: 1,
    pattern: SHELL_IDENTIFIER_PATTERN,
    description: "a parameter name is a letter or _, then letters, digits or _",
  }),
  /** Used when `launcher_run` leaves the parameter out. */
  default: Type.String(),
});
export type LauncherParam = Static<typeof LauncherParam>;

export const LauncherTemplate = Type.Object({
  name: NonEmpty,
  /** A shell program; parameters reach it as variables and nothing is
   * substituted into this text. */
  command: Type.String(),
  params: Type.Array(LauncherParam),
});
export type LauncherTemplate = Static<typeof LauncherTemplate>;

// --- launcher_config_read ---

export const LauncherConfigReadArgs = Type.Object({});
export type LauncherConfigReadArgs = Static<typeof LauncherConfigReadArgs>;
export const LauncherConfigReadResult = Type.Object({
  /** A new session's cwd must lie under one of these. */
  root_dirs: Type.Array(Type.String()),
  /** The first is the default, so order is meaningful. */
  templates: Type.Array(LauncherTemplate),
});
export type LauncherConfigReadResult = Static<typeof LauncherConfigReadResult>;
export const LauncherConfigReadRequest = request("launcher_config_read", LauncherConfigReadArgs);
export const LauncherConfigReadResponse = response(
  "launcher_config_read",
  LauncherConfigReadResult,
);

// --- launcher_run ---

/** Replies only when the command has finished or was given up on, so the
 * caller sees the launch's own output instead of guessing. */
export const LauncherRunArgs = Type.Object({
  /** Checked against `root_dirs` before anything is spawned. */
  cwd: NonEmpty,
  /** Values by parameter name. Unknown names are refused rather than ignored,
   * so a typo cannot silently launch with a default. Omitted names take
   * their defaults. */
  params: Type.Record(Type.String(), Type.String()),
  /** Absent = the default (first) template; an unknown name is refused. */
  template: Type.Optional(Type.String()),
  /** Replaces the template's command for this launch only. */
  command: Type.Optional(NonEmpty),
});
export type LauncherRunArgs = Static<typeof LauncherRunArgs>;
export const LauncherRunResult = Type.Object({
  stdout: Type.String(),
  stderr: Type.String(),
  /** Absent when a signal ended the command: there was no exit status. */
  exit_code: Type.Optional(Type.Integer()),
  /** The instance gave up waiting; the output is what arrived until then. */
  timed_out: Type.Boolean(),
});
export type LauncherRunResult = Static<typeof LauncherRunResult>;
export const LauncherRunRequest = request("launcher_run", LauncherRunArgs);
export const LauncherRunResponse = response("launcher_run", LauncherRunResult);
