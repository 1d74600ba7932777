import type { FastifyInstance, FastifyRequest } from "fastify";
import { answerUnreadableBody } from "../http/json-reply.js";

/** The key route's path below the endpoint's; kids are base64url. */
const MESH_KEY_PATH = /mesh\/jwk\/([A-Za-z0-9_-]{16,128})$/;

/** Whether `path` is the key route under the endpoint's `basePath` (the
 * gate lets it past every credential: a peer holds none here). */
export function isMeshKeyPath(basePath: string, path: string): boolean {
  return (
    path.startsWith(`${basePath}mesh/jwk/`) &&
    path.length > basePath.length &&
    MESH_KEY_PATH.test(path.slice(basePath.length))
  );
}

export interface MeshKeyDeps {
  /** The endpoint's path (`/` or a reverse proxy's prefix ending in `/`). */
  basePath: string;
  /** The client's address as recovered through trusted proxies. */
  clientIp(req: FastifyRequest): string | undefined;
  /** Answer `POST <endpoint>mesh/jwk/<kid>` (body `{challenge}`): mesh.ts. */
  keyRequest(kid: string, body: unknown, ip: string | undefined): { status: number; body: object };
}

/** The one-off key route (C2, DR-0047) as its own encapsulated plugin. */
export async function meshKeyPlugin(app: FastifyInstance, deps: MeshKeyDeps): Promise<void> {
  app.setErrorHandler(answerUnreadableBody);
  app.post(`${deps.basePath}mesh/jwk/:kid`, async (req, reply) => {
    const kid = MESH_KEY_PATH.exec(new URL(req.url, "http://ccmsg.invalid").pathname)?.[1];
    const answer =
      kid === undefined
        ? { status: 404, body: { ok: false, error: "no such key" } }
        : deps.keyRequest(kid, req.body, deps.clientIp(req));
    return reply.code(answer.status).header("cache-control", "no-store").send(answer.body);
  });
}
