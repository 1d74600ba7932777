import type { Capability } from "../../contract/identifiers.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import { lazyHandlers } from "../common/lazy-ops.js";
import type { Contribution } from "../dispatch.js";
import type { SurfaceDeps } from "../files/session-surfaces.js";
import { SandboxGrants } from "./grants.js";

/** What the HTTP listener needs for the sandbox origins: the grants, the
 * surfaces each request is checked against, and how to offer `sandbox` once
 * the listener is bound where a browser reaches `*.sandbox.localhost`. */
export interface SandboxSide {
  grants: SandboxGrants;
  surfaces: SurfaceDeps;
  offer(port: number): void;
}

/** What the sandbox is built on: a session's surfaces (what `file_read`
 * would open), the clock its grants expire by, and the capabilities it joins
 * once HTTP is up. */
export interface SandboxDeps extends SurfaceDeps {
  clock: Clock;
  log: Logger;
  capabilities: Set<Capability>;
}

/** The sandbox's ops, so they answer before their module is loaded. */
export const SANDBOX_OPS = ["sandbox_grant", "sandbox_revoke"] as const;

/** The sandbox (DR-0042): grants and their ops (loaded at the first); `sandbox` is offered once the
 * HTTP listener serves its origins (`offer`). */
export function registerSandbox(deps: SandboxDeps): Contribution & { sandbox: SandboxSide } {
  const { clock, log, sessions, presence, transcripts } = deps;
  const grants = new SandboxGrants(() => clock.now());
  const surfaces = { sessions, presence, transcripts };
  return {
    sandbox: {
      grants,
      surfaces,
      offer(port) {
        grants.serveOn(port);
        deps.capabilities.add("sandbox");
      },
    },
    handlers: lazyHandlers(SANDBOX_OPS, () =>
      import("./handlers.js").then((m) => m.sandboxHandlers({ ...surfaces, sandbox: grants, log })),
    ),
  };
}
