import { contractError } from "../../contract/errors.js";
import type { Handlers } from "../dispatch.js";
import type { PersonAuth } from "./person-auth.js";

/** What the passkey frames use. */
export interface AuthHandlerDeps {
  /** Person authentication, once the HTTP listener is bound; undefined without one. */
  people(): PersonAuth | undefined;
}

/**
 * The person-auth ops that arrive as frames (contract §9.2). `auth_refresh`
 * moves an open WebSocket's deadline; `auth_resolve` and `auth_rotate` are
 * the issuer's side, reached over the mesh — which needs an authenticated
 * instance link over WebSocket, not built yet, so only an instance on the
 * local socket can call them today, and it is answered as the issuer.
 */
export function authHandlers(s: AuthHandlerDeps): Handlers {
  const people = () => {
    const p = s.people();
    if (p === undefined)
      throw contractError("auth_invalid", "this instance has no HTTP listener, so no passkeys");
    return p;
  };
  return {
    auth_refresh({ access_token }, { conn }) {
      const session = conn.person;
      if (session === undefined)
        throw contractError("auth_invalid", "this connection was not opened with an access token");
      const found = people().person(access_token);
      if (found === "expired") throw contractError("auth_expired", "this access token has expired");
      if (found === "invalid" || found.sub !== session.sub)
        throw contractError("auth_invalid", "this access token is not valid for this connection");
      session.extend(found.expiresAt);
      return { auth_expires_at: session.expiresAt };
    },
    auth_resolve(args) {
      return people().resolve(args);
    },
    auth_rotate(args) {
      return people().rotate(args);
    },
  };
}

/** Instance-private frames over the Unix socket only (contract §9.5: "an
 * administrative frame"); never ops of the table, never on a WebSocket. */
export const ADMIN_OPS = [
  "admin_passkey_add",
  "admin_passkey_list",
  "admin_passkey_remove",
  "admin_mesh_add",
  "admin_mesh_list",
  "admin_mesh_remove",
];

export function adminHandlers(
  s: AuthHandlerDeps,
): Record<string, (frame: Record<string, unknown>) => object | Promise<object>> {
  const people = () => {
    const p = s.people();
    if (p === undefined)
      throw contractError(
        "capability_unavailable",
        "this instance runs without an HTTP listener: start it with --http host:port to use passkeys",
      );
    return p;
  };
  const text = (v: unknown, max: number) =>
    typeof v === "string" && v.length >= 1 && v.length <= max ? v : undefined;
  return {
    admin_passkey_add(frame) {
      const label = frame.name === undefined ? undefined : text(frame.name, 128);
      if (frame.name !== undefined && label === undefined)
        throw contractError("invalid_args", "name: 1 to 128 characters");
      return people().addPasskey(label);
    },
    admin_passkey_list() {
      return {
        passkeys: people()
          .list()
          .map((r) => ({
            sub: r.sub,
            credential_id: r.credential_id,
            endpoint: r.endpoint,
            rp_id: r.rp_id,
            ...(r.issued_label === null ? {} : { issued_label: r.issued_label }),
            ...(r.device_label === null ? {} : { device_label: r.device_label }),
            registered_at: r.registered_at,
            ...(r.registered_ip === null ? {} : { registered_ip: r.registered_ip }),
            ...(r.last_used_at === null ? {} : { last_used_at: r.last_used_at }),
            ...(r.last_used_ip === null ? {} : { last_used_ip: r.last_used_ip }),
          })),
      };
    },
    async admin_passkey_remove(frame) {
      const sub = text(frame.sub, 128);
      if (sub === undefined) throw contractError("invalid_args", "sub: 1 to 128 characters");
      const removed = await people().remove(sub);
      if (removed === 0) throw contractError("not_found", `no passkey of ${sub}`);
      return { sub, removed };
    },
  };
}
