import type { FastifyInstance } from "fastify";
import type { Identity } from "../../contract/envelope.js";
import { ContractError } from "../../contract/errors.js";
import type { MeshFrame, MeshPort, RelayedFrame } from "./port.js";

/**
 * Test-only routes over the MeshPort (registered with `--test-hooks` only):
 * integration tests drive `request`, `relay`, `send`/`onFrame` and `onLink`
 * of a real instance through them, before any op of this build uses them.
 * Instance-rule frames of kind `test` are recorded, as is every link event.
 */
export async function meshTestRoutes(app: FastifyInstance, mesh: MeshPort): Promise<void> {
  const links: { peer: string; up: boolean; linked: string[] }[] = [];
  const frames: { from: string; frame: MeshFrame }[] = [];
  const relays = new Map<
    number,
    { frames: { peer: string; frame: RelayedFrame }[]; end(): void }
  >();
  let nextRelay = 1;
  mesh.onLink((peer, up) => links.push({ peer, up, linked: mesh.linked() }));
  mesh.onFrame("test", (from, frame) => frames.push({ from, frame }));
  app.get("/_test/mesh/events", async () => ({ links, frames }));
  app.post("/_test/mesh/request", async (req) => {
    const b = req.body as { to: string; frame: Record<string, unknown>; timeout_ms?: number };
    try {
      return { ok: true, reply: await mesh.request(b.to, b.frame, b.timeout_ms) };
    } catch (error) {
      if (error instanceof ContractError) return { ok: false, error: error.toBody() };
      throw error;
    }
  });
  app.post("/_test/mesh/send", async (req) => {
    const b = req.body as { to: string; frame: MeshFrame };
    return { sent: mesh.send(b.to, b.frame) };
  });
  app.post("/_test/mesh/relay", async (req) => {
    const b = req.body as { topic: string; caller?: Identity };
    const n = nextRelay++;
    const got: { peer: string; frame: RelayedFrame }[] = [];
    const end = mesh.relay(b.topic, b.caller, (peer, frame) => got.push({ peer, frame }));
    relays.set(n, { frames: got, end });
    return { relay: n };
  });
  app.get("/_test/mesh/relay/:n", async (req) => ({
    frames: relays.get(Number((req.params as { n: string }).n))?.frames ?? [],
  }));
  app.delete("/_test/mesh/relay/:n", async (req) => {
    relays.get(Number((req.params as { n: string }).n))?.end();
    return { ok: true };
  });
}
