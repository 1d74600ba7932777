import type { FileKind } from "../../contract/files.js";
import type { Handlers } from "../dispatch.js";
import { isRefusal } from "./checked-open.js";
import { createFile, deleteFile, editFile, listDir, readFile, writeToInbox } from "./file-ops.js";
import { type FindStart, findFiles } from "./find.js";
import { answer, type FileOp } from "./op-codes.js";
import { places, type SurfaceDeps, surfacesOf } from "./session-surfaces.js";
import { type Admitted, admit, admitAsFile, type Final } from "./surfaces.js";

// The file ops (contract §4.3.4, DR-0036): each names a session and a
// surface; the path is admitted by that surface (files/surfaces.ts), opened
// by proof (files/checked-open.ts) and acted on (files/file-ops.ts). A
// refusal is one of a few reasons, which each op answers with a code of its
// own error set (files/op-codes.ts). That a session reaches only its own
// files is the op table's `own_sid`, refused by dispatch (DR-0052).

async function admitted(
  op: FileOp,
  s: SurfaceDeps,
  args: { sid: string; kind: FileKind; path?: string },
  final: Final = "follow",
): Promise<Admitted> {
  const surfaces = await surfacesOf(s, args.sid, [args.kind]);
  return answer(op, await admit(args.kind, surfaces, args.path, final));
}

/** Parallel path checks in one `file_stat_batch`. */
const PARALLEL_STATS = 16;

export function fileHandlers(s: SurfaceDeps): Handlers {
  return {
    async dir_list(args) {
      const a = await admitted("dir_list", s, args);
      const entries = answer("dir_list", await listDir(a));
      return { sid: args.sid, path: a.shown, entries };
    },

    async file_read(args) {
      const a = await admitted("file_read", s, args);
      const read = answer("file_read", await readFile(a));
      return { sid: args.sid, path: a.shown, ...read };
    },

    async file_write(args) {
      const { cwd } = await places(s, args.sid);
      const path = answer("file_write", await writeToInbox(cwd, args.path, args.content));
      return { sid: args.sid, path };
    },

    async file_create(args) {
      const a = await admitted("file_create", s, args, "entry");
      answer("file_create", (await createFile(a, args.content)) ?? {});
      return { sid: args.sid, path: a.shown };
    },

    async file_edit(args) {
      const a = await admitted("file_edit", s, args);
      const edited = answer(
        "file_edit",
        await editFile(a, args.content, {
          mtime_at: args.expected_mtime_at,
          size: args.expected_size,
        }),
      );
      return { sid: args.sid, path: a.shown, ...edited };
    },

    async file_delete(args) {
      const a = await admitted("file_delete", s, args, "entry");
      answer("file_delete", (await deleteFile(a)) ?? {});
      return { sid: args.sid, path: a.shown };
    },

    async file_find(args) {
      const surfaces = await surfacesOf(s, args.sid, [args.kind]);
      const starts: FindStart[] = [];
      if (args.kind === "workspace" && args.root === undefined) {
        // No root: every workspace folder, each walked once.
        for (const folder of surfaces.folders) {
          const a = await admit("workspace", surfaces, folder);
          if (isRefusal(a) || starts.some((st) => st.real === a.real)) continue;
          starts.push({ real: a.real, shown: a.shown, base: a.base });
        }
      } else {
        const a = answer("file_find", await admit(args.kind, surfaces, args.root));
        starts.push({ real: a.real, shown: a.shown, base: a.base });
      }
      const found = await findFiles(starts, args.query, args.respect_gitignore ?? true);
      return { sid: args.sid, ...found };
    },

    async file_stat_batch(args) {
      const surfaces = await surfacesOf(s, args.sid, ["contained", "workspace", "external"]);
      const results: ({ kind: FileKind; path: string } | null)[] = new Array(args.paths.length);
      let next = 0;
      const worker = async () => {
        while (next < args.paths.length) {
          const i = next++;
          const a = await admitAsFile(surfaces, args.paths[i] ?? "");
          results[i] = a === undefined ? null : { kind: a.kind, path: a.shown };
        }
      };
      await Promise.all(Array.from({ length: PARALLEL_STATS }, worker));
      return { results };
    },
  };
}
