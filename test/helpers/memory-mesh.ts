import { MAX_FRAME_BYTES } from "../../src/contract/constants.js";
import type { MeshFrame, MeshPort } from "../../src/instance/mesh/port.js";

/**
 * Mesh links in memory, for engines built on MeshPort's instance-rule frames
 * (send, onFrame, onLink, linked). Every pair is linked until cut. A frame
 * travels as JSON text (so what arrives is what a socket would carry) on the
 * next turn of the event loop, in order per direction; frames still travelling
 * when a link is cut are lost, as on a socket that drops.
 */
export interface MemoryMesh {
  port(id: string): MeshPort;
  /** Drop the link between two instances (both sides hear it go down). */
  cut(a: string, b: string): void;
  /** Replace the link between two instances: what travels on it is lost and
   * only `a` hears it come up again (without going down). */
  replace(a: string, b: string): void;
  /** Restore one link, or every link. */
  heal(a?: string, b?: string): void;
  /** Frames sent and not yet delivered or lost. */
  travelling(): number;
  /** Frames sent in all, and the largest one in bytes. */
  stats(): { frames: number; largest: number };
  /** Every frame sent: its ends, its `t` and how many entries (`e`) it held. */
  sent(): { from: string; to: string; t: unknown; entries: number }[];
}

export function memoryMesh(ids: readonly string[]): MemoryMesh {
  const pairKey = (a: string, b: string) => (a < b ? `${a}|${b}` : `${b}|${a}`);
  const down = new Set<string>();
  // Bumped on every cut, so frames sent over an earlier life of a link are lost.
  const life = new Map<string, number>();
  const frameHandlers = new Map<string, Map<string, (from: string, f: MeshFrame) => void>>();
  const linkListeners = new Map<string, ((peer: string, up: boolean) => void)[]>();
  let travelling = 0;
  let frames = 0;
  let largest = 0;
  const sent: { from: string; to: string; t: unknown; entries: number }[] = [];

  const linked = (a: string, b: string) => a !== b && !down.has(pairKey(a, b));
  const tell = (id: string, peer: string, up: boolean) => {
    for (const l of linkListeners.get(id) ?? []) l(peer, up);
  };

  function port(id: string): MeshPort {
    if (!ids.includes(id)) throw new Error(`no instance ${id} in this mesh`);
    frameHandlers.set(id, new Map());
    linkListeners.set(id, []);
    const notHere = (what: string) => () => {
      throw new Error(`${what} is not part of the memory mesh`);
    };
    return {
      id,
      configured: true,
      instances: notHere("instances"),
      linked: () => ids.filter((p) => linked(id, p)),
      anyUnreachable: () => ids.some((p) => p !== id && !linked(id, p)),
      peerOf: () => undefined,
      request: notHere("request"),
      relay: notHere("relay"),
      send(to, frame) {
        if (!linked(id, to)) return false;
        const key = pairKey(id, to);
        const at = life.get(key) ?? 0;
        const text = JSON.stringify(frame);
        const bytes = Buffer.byteLength(text);
        if (bytes > MAX_FRAME_BYTES)
          throw new Error(`frame of ${bytes} bytes exceeds MAX_FRAME_BYTES`);
        frames++;
        largest = Math.max(largest, bytes);
        sent.push({
          from: id,
          to,
          t: frame.t,
          entries: Array.isArray(frame.e) ? frame.e.length : 0,
        });
        travelling++;
        setImmediate(() => {
          travelling--;
          if ((life.get(key) ?? 0) !== at || !linked(id, to)) return;
          const f = JSON.parse(text) as MeshFrame;
          frameHandlers.get(to)?.get(f.mesh)?.(id, f);
        });
        return true;
      },
      onFrame(kind, handler) {
        frameHandlers.get(id)!.set(kind, handler);
      },
      onLink(listener) {
        linkListeners.get(id)!.push(listener);
      },
    };
  }

  return {
    port,
    cut(a, b) {
      const key = pairKey(a, b);
      if (down.has(key)) return;
      down.add(key);
      life.set(key, (life.get(key) ?? 0) + 1);
      tell(a, b, false);
      tell(b, a, false);
    },
    replace(a, b) {
      const key = pairKey(a, b);
      life.set(key, (life.get(key) ?? 0) + 1);
      tell(a, b, true);
    },
    heal(a, b) {
      const keys = a === undefined || b === undefined ? [...down] : [pairKey(a, b)];
      for (const key of keys) {
        if (!down.delete(key)) continue;
        const [x, y] = key.split("|") as [string, string];
        tell(x, y, true);
        tell(y, x, true);
      }
    },
    travelling: () => travelling,
    stats: () => ({ frames, largest }),
    sent: () => sent,
  };
}
