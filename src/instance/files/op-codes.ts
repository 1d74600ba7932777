import type { OpName } from "../../contract/attributes.js";
import { contractError, type ErrorCode } from "../../contract/errors.js";
import { isRefusal, type Refusal, type RefusalReason } from "./checked-open.js";

// How each file op answers a refusal, with a code from its own error set
// (contract §4.2; the peers of every test check replies against it).
// `file_edit`'s set has neither `path_forbidden` nor `not_found`: a path its
// surface does not admit is `invalid_args` (the arguments name what this op
// may never touch), a file gone or changed since it was read is
// `file_conflict` (DR-0036).

export type FileOp = Extract<
  OpName,
  | "dir_list"
  | "file_read"
  | "file_write"
  | "file_create"
  | "file_edit"
  | "file_delete"
  | "file_find"
>;

function every(code: ErrorCode): Record<RefusalReason, ErrorCode> {
  return {
    outside: code,
    missing: code,
    directory: code,
    not_dir: code,
    special: code,
    symlink: code,
    changed: code,
    exists: code,
    denied: code,
    conflict: code,
    binary: code,
  };
}

const CODES: Record<FileOp, Record<RefusalReason, ErrorCode>> = {
  dir_list: { ...every("path_forbidden"), missing: "not_found", not_dir: "not_found" },
  file_read: { ...every("path_forbidden"), missing: "not_found" },
  file_create: { ...every("path_forbidden"), exists: "file_exists" },
  file_delete: { ...every("path_forbidden"), missing: "not_found" },
  // No `not_found` here: a start that is not there is out of reach.
  file_find: every("path_forbidden"),
  file_write: { ...every("path_not_writable"), exists: "file_exists" },
  file_edit: {
    ...every("invalid_args"),
    missing: "file_conflict",
    directory: "file_conflict",
    changed: "file_conflict",
    conflict: "file_conflict",
    binary: "not_a_text_file",
    // A file the instance may not write is not the caller's doing.
    denied: "internal_error",
  },
};

/** The code `op` answers a refusal with. */
export function codeOf(op: FileOp, r: Refusal): ErrorCode {
  return CODES[op][r.refused];
}

/** Throw a refusal as `op`'s contract error; hand back anything else. */
export function answer<T>(op: FileOp, outcome: T | Refusal): T {
  if (isRefusal(outcome)) throw contractError(codeOf(op, outcome), outcome.msg);
  return outcome;
}
