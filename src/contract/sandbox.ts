import { type Static, Type } from "@sinclair/typebox";
import { request, response } from "./envelope.js";
import { FileKind } from "./files.js";
import { NonEmpty, Sid, Timestamp } from "./identifiers.js";

// The sandbox (contract §4.3.5): a URL on a separate origin through which a
// session's file opens or downloads as itself. The separate origin is the
// point: a file rendered there cannot reach the console's own origin.

// --- sandbox_grant ---

/** The same check as the matching `file_read` runs when the grant is minted
 * and again on every request through it, so a grant never outlives the
 * permission behind it. */
export const SandboxGrantArgs = Type.Object({ sid: Sid, kind: FileKind, path: NonEmpty });
export type SandboxGrantArgs = Static<typeof SandboxGrantArgs>;
export const SandboxGrantResult = Type.Object({
  /** Grant id. Part of a hostname, hence not secret. */
  gid: NonEmpty,
  /** The secret; lets the client build sibling URLs under the same grant. */
  token: NonEmpty,
  /** Ready to open. */
  url: NonEmpty,
  /** Granting the same scope again returns the same grant with a later
   * expiry, so repeated opens do not pile up grants. */
  expires_at: Timestamp,
});
export type SandboxGrantResult = Static<typeof SandboxGrantResult>;
export const SandboxGrantRequest = request("sandbox_grant", SandboxGrantArgs);
export const SandboxGrantResponse = response("sandbox_grant", SandboxGrantResult);

// --- sandbox_revoke ---

/** Always succeeds: an unknown or expired grant is not reported, so the op
 * cannot be used to probe which grants exist. */
export const SandboxRevokeArgs = Type.Object({ gid: NonEmpty });
export type SandboxRevokeArgs = Static<typeof SandboxRevokeArgs>;
export const SandboxRevokeResult = Type.Object({});
export type SandboxRevokeResult = Static<typeof SandboxRevokeResult>;
export const SandboxRevokeRequest = request("sandbox_revoke", SandboxRevokeArgs);
export const SandboxRevokeResponse = response("sandbox_revoke", SandboxRevokeResult);
