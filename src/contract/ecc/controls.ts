// The session controls' names, apart from their schemas: a module without the
// schema library, so the HUD and the CLI's controls load it cheaply.

/** The eight controls: the only values of `supported` and `blocked[].control`,
 * in the contract's order. */
export const SESSION_CONTROLS = [
  "create",
  "resume",
  "status",
  "stop",
  "diff",
  "pr",
  "mergeQueue",
  "conflictQueue",
] as const;
export type SessionControl = (typeof SESSION_CONTROLS)[number];
