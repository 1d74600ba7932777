import { contractError } from "../../contract/errors.js";
import type { Logger } from "../../util/logger.js";
import type { Handlers } from "../dispatch.js";
import { isRefusal } from "../files/checked-open.js";
import { openForRead, type SurfaceDeps } from "../files/session-surfaces.js";
import { normalizeAbsolute, normalizeRelative } from "../files/surfaces.js";
import type { SandboxGrants } from "./grants.js";

// The sandbox (contract §4.3.5, capability `sandbox`, DR-0042): a grant is
// minted only for a file `file_read` would open for a person right now, and
// every request through it runs that check again (sandbox/serve.ts).

/** What the sandbox ops use. */
export interface SandboxHandlerDeps extends SurfaceDeps {
  log: Logger;
  sandbox: SandboxGrants;
}

export function sandboxHandlers(s: SandboxHandlerDeps): Handlers {
  return {
    async sandbox_grant({ sid, kind, path }) {
      if (!s.sandbox.serving)
        throw contractError("capability_unavailable", "the HTTP listener is not up");
      const canonical = kind === "contained" ? normalizeRelative(path) : normalizeAbsolute(path);
      if (canonical === undefined || canonical === "")
        throw contractError("path_forbidden", `${path} names no file this surface admits`);
      const read = await openForRead(s, sid, kind, canonical);
      // Every refusal is `path_forbidden`: the op's only declared code, and
      // a grant is never minted for what a read would not open.
      if (isRefusal(read)) throw contractError("path_forbidden", read.msg);
      await read.opened.fh.close();
      const grant = s.sandbox.mint(sid, kind, canonical);
      s.log.info({ gid: grant.gid, sid, kind }, "sandbox_grant");
      return {
        gid: grant.gid,
        token: grant.token,
        url: s.sandbox.url(grant),
        expires_at: grant.expiresAt,
      };
    },

    async sandbox_revoke({ gid }) {
      s.sandbox.revoke(gid);
      return {};
    },
  };
}
