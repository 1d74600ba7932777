import { contractError } from "../../contract/errors.js";
import type { Mesh } from "./mesh.js";

/** What the mesh's administrative frames use. */
export interface MeshAdminDeps {
  mesh: Mesh;
}

/** `ccmsg mesh add|list|remove` (DR-0047): administrative frames over the
 * Unix socket only, like the passkey ones (auth.ts), so a change takes effect
 * at once — a new peer is dialed, a removed one's link closes. */
export function meshAdminHandlers(
  s: MeshAdminDeps,
): Record<string, (frame: Record<string, unknown>) => object | Promise<object>> {
  const text = (v: unknown, name: string) => {
    if (typeof v !== "string" || v.length < 1 || v.length > 2048)
      throw contractError("invalid_args", `${name}: 1 to 2048 characters`);
    return v;
  };
  return {
    admin_mesh_add(frame) {
      const endpoint = text(frame.endpoint, "endpoint");
      const id = frame.id === undefined ? undefined : text(frame.id, "id");
      return s.mesh.add(endpoint, id);
    },
    admin_mesh_list() {
      return s.mesh.list();
    },
    admin_mesh_remove(frame) {
      return s.mesh.remove(text(frame.peer, "peer"));
    },
  };
}
