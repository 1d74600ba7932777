import { isLoopbackHost, isSandboxName } from "../../net/address.js";

/**
 * Who may talk to this listener (DNS rebinding, cross-site requests): the
 * `Host` must name this listener — its bound address, or any loopback name when
 * it is bound to loopback — and an `Origin`, when a browser sends one, must be
 * this listener's own `http://` origin under one of those names. A wildcard
 * bind (0.0.0.0, ::) accepts any Host until the public endpoint is configured.
 * Returns why a request is refused, or undefined.
 */
export function hostAndOriginRule(
  boundHost: string,
  port: number,
  endpoint?: string,
): (host: string | undefined, origin: string | undefined) => string | undefined {
  // The public endpoint (a reverse proxy's name) is this instance too.
  const publicUrl = endpoint === undefined ? undefined : new URL(endpoint);
  const wildcard = boundHost === "0.0.0.0" || boundHost === "::";
  const bracketed = boundHost.includes(":") ? `[${boundHost}]` : boundHost;
  const names = new Set([bracketed]);
  if (isLoopbackHost(boundHost)) for (const n of ["127.0.0.1", "localhost", "[::1]"]) names.add(n);
  const ours = (hostPort: string) => {
    const colon = hostPort.lastIndexOf(":");
    if (colon < 0 || hostPort.slice(colon + 1) !== String(port)) return false;
    return names.has(hostPort.slice(0, colon).toLowerCase());
  };
  // A sandbox name is never the console's, even under a wildcard bind: its
  // pages are files of sessions (DR-0042).
  const sandboxed = (hostPort: string) => {
    const colon = hostPort.lastIndexOf(":");
    return isSandboxName(colon < 0 ? hostPort : hostPort.slice(0, colon));
  };
  return (host, origin) => {
    if (host !== undefined && sandboxed(host)) return "Host is a sandbox, not the console";
    const isPublic = publicUrl !== undefined && host?.toLowerCase() === publicUrl.host;
    if (!wildcard && !isPublic && (host === undefined || !ours(host)))
      return "Host is not this instance";
    if (origin === undefined) return undefined;
    if (publicUrl !== undefined && origin === publicUrl.origin) return undefined;
    try {
      const url = new URL(origin);
      if (
        url.protocol === "http:" &&
        !isSandboxName(url.hostname) &&
        (wildcard ? url.port === String(port) : ours(url.host))
      )
        return undefined;
    } catch {}
    return "Origin is not this instance";
  };
}
