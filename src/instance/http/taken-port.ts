import type { HttpConfig } from "../../config/config.js";
import { isLoopbackHost, parseHostPort } from "../../net/address.js";
import { AuthRecordsStore } from "../../store/auth-records.js";
import { endpointFor } from "../auth/people.js";
import type { Mesh } from "../mesh/mesh.js";
import type { InstanceStore } from "../store/instance-store.js";

// When the asked listen address is in use, HTTP takes a free port on the same
// loopback host, so that `npm start` always gives a console. It does so only
// where nothing but this run's own output names the port: the console link
// and `instance.json` follow the port, whatever else points at it does not.

/** Why HTTP may not move off `listen` to a free port, or undefined when it
 * may. */
export function pinnedBy(o: {
  listen: string;
  network: HttpConfig;
  mesh?: Mesh;
  store: InstanceStore;
}): string | undefined {
  // Beyond loopback a firewall rule, a port forward or the people told of the
  // address name the port, and its exposure was asked for as it is (DR-0044).
  if (!isLoopbackHost(parseHostPort(o.listen).host))
    return "the address is beyond loopback, where whatever reaches it names the port";
  // A proxy (Tailscale Serve, Caddy) forwards the endpoint to that port: on
  // another one the endpoint would reach whatever holds it.
  if (o.network.endpoint !== undefined)
    return `http.endpoint (${o.network.endpoint}) is proxied to it`;
  // Peers know this instance by the bound address (DR-0047).
  if ((o.mesh?.list().peers.length ?? 0) > 0)
    return "the instances on the mesh list reach this one at it";
  // A passkey belongs to the endpoint, port included: moved, it would sign no one in.
  const endpoint = endpointFor(o.listen, o.network);
  if (new AuthRecordsStore(o.store.db).credentials().some((c) => c.endpoint === endpoint))
    return `passkeys are registered for ${endpoint}`;
  return undefined;
}

/** The refusal for a taken address that may not move; its code stays
 * EADDRINUSE, which `ccmsg daemon run` knows. */
export function portTaken(listen: string, why: string): Error {
  return Object.assign(
    new Error(`${listen} is in use, and HTTP may not move to another port: ${why}`),
    { code: "EADDRINUSE" },
  );
}
