import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { MESH_HANDSHAKES_PER_SOURCE } from "../../src/instance/http/mesh-admission.js";
import { adminFrame, startMesh, type TestMesh } from "../helpers/mesh.js";
import { freePort } from "../helpers/ports.js";

// Issue 23, item 9: a mesh socket (the `ccmsg.mesh` subprotocol, no
// credential) is refused before the handshake by an instance in no mesh, and
// one source address may hold only so many whose handshake is still running.

/** Open a mesh socket: the upgrade's status (101 when it opened). */
function meshUpgrade(endpoint: string, opened: WebSocket[] = []): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`${endpoint}ws`, ["ccmsg.mesh"]);
    ws.once("open", () => {
      opened.push(ws);
      resolve(101);
    });
    ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.on("error", () => {});
  });
}

describe("mesh upgrades", () => {
  let mesh: TestMesh;
  let R: string;
  const sockets: WebSocket[] = [];
  beforeAll(async () => {
    // A long dead time: a silent socket is cut only after 10 s here, so the
    // sockets below stay in their handshake for the whole test.
    mesh = await startMesh(1, { deadMs: 60_000 });
    R = mesh.endpoints[0]!;
  }, 30_000);
  afterAll(async () => {
    for (const ws of sockets) ws.terminate();
    await mesh?.stop();
  });

  it("an instance in no mesh refuses them before the handshake (403)", async () => {
    expect((await mesh.list(0)).peers).toEqual([]);
    expect(await meshUpgrade(R)).toBe(403);
  });

  it("in a mesh, one address holds at most so many unverified sockets; a closed one frees its place", async () => {
    // A listed peer that is never there: this instance is in a mesh now.
    await adminFrame(mesh.instances[0]!.socket, "admin_mesh_add", {
      endpoint: `http://127.0.0.1:${await freePort()}/`,
    });
    const statuses: number[] = [];
    for (let i = 0; i < MESH_HANDSHAKES_PER_SOURCE; i++)
      statuses.push(await meshUpgrade(R, sockets));
    expect(statuses).toEqual(Array(MESH_HANDSHAKES_PER_SOURCE).fill(101));
    expect(await meshUpgrade(R)).toBe(429);
    const first = sockets.shift()!;
    const closed = new Promise((r) => first.once("close", r));
    first.close();
    await closed;
    // The server sees the close a moment after the client does.
    let again = 0;
    for (let i = 0; i < 50 && again !== 101; i++) {
      again = await meshUpgrade(R, sockets);
      if (again !== 101) await new Promise((r) => setTimeout(r, 20));
    }
    expect(again).toBe(101);
  });
});

describe("dialing an instance in no mesh", () => {
  let mesh: TestMesh;
  afterAll(async () => {
    await mesh?.stop();
  });

  it("the dialer's mesh list says why it was refused", async () => {
    mesh = await startMesh(2, { noPeers: true, deadMs: 60_000 });
    await adminFrame(mesh.instances[0]!.socket, "admin_mesh_add", { endpoint: mesh.endpoints[1] });
    let why: string | undefined;
    for (let i = 0; i < 200 && why === undefined; i++) {
      why = (await mesh.list(0)).peers[0]?.last_error;

      if (why === undefined) await new Promise((r) => setTimeout(r, 25));
    }
    expect(why).toBe(
      "the peer refused the mesh socket (HTTP 403): this instance is in no mesh: it lists no peer",
    );
  }, 30_000);
});
