import type { Socket } from "node:net";
import type { PeerEndpoint } from "../../probes/process.js";

export type { PeerEndpoint };

// Node does not expose SO_PEERCRED; what a transport records instead is what
// `ss` needs to name the peer's process (probes/process.ts).

/** The accepted socket's descriptor (Node keeps it on an internal handle). */
export function udsPeer(socket: Socket): PeerEndpoint | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === "number" && fd >= 0 ? { kind: "uds", fd } : undefined;
}

export function tcpPeer(socket: Socket): PeerEndpoint | undefined {
  const { localAddress, localPort, remoteAddress, remotePort } = socket;
  if (localAddress === undefined || localPort === undefined) return undefined;
  if (remoteAddress === undefined || remotePort === undefined) return undefined;
  return {
    kind: "tcp",
    local: { address: localAddress, port: localPort },
    remote: { address: remoteAddress, port: remotePort },
  };
}
