import { hostname } from "node:os";
import type { HttpConfig } from "../../config/config.js";
import { isLoopbackHost, parseHostPort } from "../../net/address.js";
import { AuthRecordsStore } from "../../store/auth-records.js";
import type { Logger } from "../../util/logger.js";
import type { InstanceStore } from "../store/instance-store.js";
import { PersonAuth } from "./person-auth.js";

/** Beyond loopback only for people who can prove who they are (DR-0044):
 * throws, saying how to add a passkey, when none is registered. */
export function refuseBareExposure(listen: string, store: InstanceStore): void {
  if (isLoopbackHost(parseHostPort(listen).host)) return;
  if (new AuthRecordsStore(store.db).credentials().length > 0) return;
  throw new Error(
    `refusing to listen on ${listen}: beyond loopback the console needs at least one passkey. Start on loopback (ccmsg daemon start), run \`ccmsg passkey add\` and register it at the printed URL (reached through your reverse proxy or tailnet endpoint), then restart with --http ${listen}`,
  );
}

/** The endpoint a listener at `address` is reached at: the configured one,
 * else `http://localhost:<port>/` (a WebAuthn RP ID; an IP address is not
 * one). Passkeys belong to it. */
export function endpointFor(address: string, config: HttpConfig | undefined): string {
  const bound = parseHostPort(address);
  return (
    config?.endpoint ??
    (isLoopbackHost(bound.host) || bound.host === "0.0.0.0" || bound.host === "::"
      ? `http://localhost:${bound.port}/`
      : `http://${address}/`)
  );
}

/** Person authentication for a bound listener, at its endpoint (endpointFor). */
export function startPeople(o: {
  id: string;
  address: string;
  config: HttpConfig | undefined;
  store: InstanceStore;
  now(): number;
  log: Logger;
  accessTtlMs: number | undefined;
}): PersonAuth {
  const endpoint = endpointFor(o.address, o.config);
  const people = new PersonAuth({
    instanceId: o.id,
    unit: unitName(),
    endpoint,
    store: new AuthRecordsStore(o.store.db),
    commit: (write) => o.store.queue.run(write),
    now: o.now,
    log: o.log,
    ...(o.accessTtlMs === undefined ? {} : { accessTtlMs: o.accessTtlMs }),
  });
  void people.prune().catch((error: unknown) => o.log.warn({ err: error }, "auth prune failed"));
  return people;
}

/** The instance's operator-facing name for subjects (`<unit>-<n>`): the
 * host's first label, in the characters a subject keeps readable. */
function unitName(): string {
  const label = (hostname().split(".")[0] ?? "").toLowerCase().replace(/[^a-z0-9-]/g, "");
  return label === "" ? "ccmsg" : label.slice(0, 64);
}
