import type { Logger } from "pino";
import type { Capability } from "../../contract/identifiers.js";
import type { Clock } from "../../util/clock.js";
import type { Contribution } from "../dispatch.js";
import type { SurfaceDeps } from "../files/session-surfaces.js";
import { SandboxGrants } from "./grants.js";
import { sandboxHandlers } from "./handlers.js";

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

/** The sandbox (DR-0042): grants and their ops; `sandbox` is offered once the
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
    handlers: sandboxHandlers({ ...surfaces, sandbox: grants, log }),
  };
}
