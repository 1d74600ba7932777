import { lazyHandlers } from "../common/lazy-ops.js";
import type { Contribution } from "../dispatch.js";
import type { FileOp } from "./op-codes.js";
import type { SurfaceDeps } from "./session-surfaces.js";

/** Every file op, so they answer before their module is loaded. */
export const FILE_OPS = [
  ...["dir_list", "file_read", "file_write", "file_create", "file_edit", "file_delete"],
  ...["file_find", "file_stat_batch"],
] as const satisfies readonly (FileOp | "file_stat_batch")[];

/** The file ops (contract §4.3.4, DR-0036) over a session's surfaces,
 * loaded at the first file op. */
export function registerFiles(deps: SurfaceDeps): Contribution {
  return {
    handlers: lazyHandlers(FILE_OPS, () =>
      import("./handlers.js").then((m) => m.fileHandlers(deps)),
    ),
  };
}
