// No schema library here: the client and the CLI load this module on every
// call. The schemas of these shapes are in envelope.ts.

/**
 * The closed list of error codes of generation 3 (contract §3.1). Emitting any
 * other code violates the contract; this is not an extension point. Clients
 * branch on `code` only, never on `msg`.
 */
export const ERROR_CODES = [
  // --- connection: the frame itself, before any op rule is read ---
  /** The frame cannot be dispatched: JSON does not parse, `op` or `request_id`
   * is missing, it exceeds MAX_FRAME_BYTES, a `hello` names another generation,
   * or a second `hello` arrives. The connection stays open. */
  "bad_request",
  /** `op` is not in the attribute table — distinct from an op this build has not
   * implemented yet, which answers `internal_error`. */
  "unknown_op",
  /** The op needs a settled identity and the connection has none yet. */
  "hello_required",
  /** Valid, allowed, and failed anyway for a reason that is not the caller's.
   * Kept apart from `bad_request` so callers do not re-examine arguments that
   * were never the problem. Belongs to no op: any op can fail this way. */
  "internal_error",

  // --- rule-derived: follow from the op's attribute row, never declared ---
  /** The connection's role is outside the op's (or topic's) roles. Never used
   * for argument problems. */
  "forbidden",
  /** Arguments fail the op's schema, or break a role rule no schema can state. */
  "invalid_args",
  /** The op or topic needs a capability this instance lacks. */
  "capability_unavailable",
  /** An instance-local op could not be forwarded to the instance owning its
   * subject. */
  "instance_unreachable",

  // --- subscription ---
  /** The topic name is not defined in this generation. */
  "topic_unknown",

  // --- subject lookup ---
  /** The sid names no session anywhere in the mesh. */
  "session_not_found",
  /** A path, transcript, preset, record or KV key named in the arguments does
   * not exist — any subject other than a session. */
  "not_found",

  // --- file access ---
  /** The path is outside what the caller may reach through the chosen surface. */
  "path_forbidden",
  /** The destination cannot be written (`file_write`). */
  "path_not_writable",
  /** The create/write target already exists. */
  "file_exists",
  /** The file changed between the read an edit was based on and the write. */
  "file_conflict",
  /** The content on disk sniffs as binary, so a text edit could not be faithful. */
  "not_a_text_file",

  // --- auth ---
  /** Once valid, now past its window; recoverable by repeating the minting step. */
  "auth_expired",
  /** Did not verify. Deliberately vague: also a wrong code or a spent URL. */
  "auth_invalid",
  /** The issuing instance is unknown to this mesh or unreachable now. */
  "auth_unknown_issuer",

  // --- translate ---
  /** The translate helper exists but failed on this call (its absence is
   * `capability_unavailable`). */
  "translate_helper_failed",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** Codes that may answer any request and are therefore in no op's list. */
export const CONNECTION_CODES = [
  "bad_request",
  "unknown_op",
  "internal_error",
] as const satisfies readonly ErrorCode[];

/** Codes `opErrors` derives from an op's attributes; a table row that declares
 * one of these by hand is a bug the tests catch. */
export const DERIVED_CODES = [
  "invalid_args",
  "hello_required",
  "forbidden",
  "capability_unavailable",
  "instance_unreachable",
] as const satisfies readonly ErrorCode[];

/** The error body: a code from the closed list and a message for humans. For
 * `invalid_args` the message is the schema failures, one `path: message` per
 * line. */
export interface ErrorBody {
  code: ErrorCode;
  msg: string;
}

const codes: ReadonlySet<string> = new Set(ERROR_CODES);
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === "string" && codes.has(value);
}

/**
 * Codes of ECC's operator surfaces (the control-pane HTTP API, the CLI) that are
 * not wire codes: a mutation that could not take the store's write lock, or
 * found both mutation slots taken. On the wire such a failure is
 * `internal_error` (see `wireCode`).
 */
export const STATE_STORE_BUSY = "STATE_STORE_BUSY";
/** ECC's state-store lock was replaced or removed while held (ecc-surfaces §3.4). */
export const STATE_STORE_LOCK_LOST = "STATE_STORE_LOCK_LOST";
export type FailureCode = ErrorCode | typeof STATE_STORE_BUSY | typeof STATE_STORE_LOCK_LOST;

/**
 * The one error type of ccmsg: a refusal or failure with a code clients branch
 * on, built by `contractError`. Instance, store, board, CLI and client all
 * throw it; `status` is the HTTP status where an HTTP surface answers it.
 * A dependency's error is mapped at the boundary and kept as `cause`.
 */
export class ContractError extends Error {
  override readonly name = "ContractError";
  readonly status: number | undefined;
  constructor(
    readonly code: FailureCode,
    msg: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(msg, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = options?.status;
  }
  /** The body a wire reply carries: a surface-only code becomes
   * `internal_error`, as it is not the caller's fault. */
  toBody(): ErrorBody {
    return { code: wireCode(this.code), msg: this.message };
  }
}

export function contractError(
  code: FailureCode,
  msg: string,
  options?: { cause?: unknown; status?: number },
): ContractError {
  return new ContractError(code, msg, options);
}

/** The wire code for a failure code: itself, or `internal_error`. */
export function wireCode(code: FailureCode): ErrorCode {
  return code === STATE_STORE_BUSY || code === STATE_STORE_LOCK_LOST ? "internal_error" : code;
}
