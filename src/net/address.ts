import { contractError } from "../contract/errors.js";

// Listen addresses: the one place a host:port is parsed and loopback is named.

/** Whether a host name or address (IPv6 with or without brackets) names this
 * machine's loopback interface. The one place this is decided. */
export function isLoopbackHost(host: string): boolean {
  return host === "127.0.0.1" || host === "::1" || host === "[::1]" || host === "localhost";
}

/** The DNS name under which each sandbox grant gets an origin of its own
 * (`<gid>.sandbox.localhost`, DR-0042): browsers take every `*.localhost`
 * name as loopback by their own rule, no resolver asked. The console never
 * answers under it. */
export const SANDBOX_DOMAIN = "sandbox.localhost";

/** Whether a host name (no port) lies under SANDBOX_DOMAIN. */
export function isSandboxName(host: string): boolean {
  return host.toLowerCase().endsWith(`.${SANDBOX_DOMAIN}`);
}

/** Split `host:port` (`[v6]:port`; a bare port means loopback). */
export function parseHostPort(value: string): { host: string; port: number } {
  const colon = value.lastIndexOf(":");
  const host = colon < 0 ? "127.0.0.1" : value.slice(0, colon).replace(/^\[|\]$/g, "");
  const port = Number(colon < 0 ? value : value.slice(colon + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw contractError("invalid_args", `not a host:port: ${value}`);
  return { host: host || "127.0.0.1", port };
}
