// What the mesh's modules share about frames and sockets (DR-0047).

/** WebSocket close codes of the mesh. */
export const CLOSE = {
  /** The other of two links both sides dialed (glare): not a reason to reconnect. */
  duplicate: 4000,
  /** The handshake failed (§8.1's list), or a frame came before the ack. */
  refused: 4001,
  /** The peer was removed from this instance's list. */
  removed: 4002,
  /** Nothing arrived for the dead time. */
  silent: 4003,
  /** The instance stops. */
  stopping: 1001,
} as const;

/** The `request_id` of the dialer's greeting. */
export const HELLO_RID = "mesh-hello";

/** The mesh greeting's claim (contract §4.3.1 `MeshHello`, schema-checked). */
export interface Claim {
  ver: number;
  iss: string;
  aud: string;
  id: string;
  kid: string;
}

/** A line as a JSON object, or undefined. */
export function parseObject(line: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(line);
    return typeof v === "object" && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
