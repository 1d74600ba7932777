import type { Socket } from "node:net";
import type { AuthAnswer } from "./owner-auth.js";

/** Mesh sockets one source address may have in their handshake at once. */
export const MESH_HANDSHAKES_PER_SOURCE = 8;

/** What admission reads of the mesh (mesh/mesh.ts), live. */
export interface MeshAdmissionSide {
  /** An endpoint and at least one peer listed: a handshake can succeed. */
  readonly configured: boolean;
  /** How long a mesh socket may stay silent before its greeting; the
   * handshake after it is bounded by the same time. */
  readonly greetingMs: number;
}

/**
 * Who may open a mesh socket (the `ccmsg.mesh` subprotocol, no credential;
 * DR-0047), decided before the WebSocket handshake. An instance in no mesh
 * refuses them all (403): no greeting could pass, so none is waited for. In a
 * mesh, a source address (as recovered through trusted proxies) holds at most
 * MESH_HANDSHAKES_PER_SOURCE sockets whose handshake may still be running —
 * from the upgrade until the socket closes or its greeting wait and handshake
 * time have passed (by then it is a verified link or cut); more are 429.
 */
export class MeshAdmission {
  private readonly open = new Map<string, number>();

  constructor(
    private readonly mesh: MeshAdmissionSide,
    private readonly perSource = MESH_HANDSHAKES_PER_SOURCE,
  ) {}

  /** Undefined when admitted (the slot is held for `socket`), else the
   * refusal to answer the upgrade with. */
  admit(source: string, socket: Socket): AuthAnswer | undefined {
    if (!this.mesh.configured)
      return {
        status: 403,
        headers: {},
        body: { ok: false, error: "this instance is in no mesh: it lists no peer" },
      };
    const held = this.open.get(source) ?? 0;
    if (held >= this.perSource)
      return {
        status: 429,
        headers: { "Retry-After": String(Math.ceil(this.mesh.greetingMs / 1000)) },
        body: { ok: false, error: "too many mesh handshakes from this address" },
      };
    this.open.set(source, held + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      clearTimeout(timer);
      const left = (this.open.get(source) ?? 1) - 1;
      if (left === 0) this.open.delete(source);
      else this.open.set(source, left);
    };
    const timer = setTimeout(release, 2 * this.mesh.greetingMs);
    timer.unref();
    socket.once("close", release);
    return undefined;
  }
}
