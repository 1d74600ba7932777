import type { FileKind } from "../../contract/files.js";
import type { Presence } from "../sessions/presence.js";
import type { Sessions } from "../sessions/sessions.js";
import type { Transcripts } from "../transcripts/engine.js";
import { isRefusal, type Opened, openChecked, type Refusal } from "./checked-open.js";
import { type Admitted, admit, type Surfaces } from "./surfaces.js";

// A session's surfaces as the instance knows them now (contract §4.3.4,
// DR-0036), for the file ops and for every request through a sandbox grant
// (DR-0042): one place reads them, so the two can never check differently.

/** What reading a session's surfaces needs. */
export interface SurfaceDeps {
  sessions: Sessions;
  presence: Pick<Presence, "fresh">;
  transcripts: Transcripts;
}

/** The session's stated places: root (`repo_root`, else `cwd`) and cwd. */
export async function places(
  s: SurfaceDeps,
  sid: string,
): Promise<{ root?: string; cwd?: string }> {
  let found = s.sessions.lookup(sid);
  if (found === undefined) {
    await s.presence.fresh();
    found = s.sessions.lookup(sid);
  }
  const meta = found === undefined ? {} : found.kind === "live" ? found.session.meta : found.row;
  const root = meta.repo_root ?? meta.cwd;
  return { ...(root === undefined ? {} : { root }), ...(meta.cwd ? { cwd: meta.cwd } : {}) };
}

/** Workspace folders and external files, from the session's status fold
 * (the transcript feed, brought up to date first). */
async function statusLists(s: SurfaceDeps, sid: string): Promise<Omit<Surfaces, "root">> {
  const feed = await s.transcripts.feeds.open(sid);
  if (feed === undefined) return { folders: [], external: [] };
  try {
    await feed.refresh();
    await feed.parts.status.settled();
    const snap = feed.parts.status.snapshot();
    return {
      folders: snap.workspace_folders.map((f) => f.path),
      external: snap.external_files.map((f) => f.path),
    };
  } finally {
    feed.release();
  }
}

/** A session's surfaces, reading only what `kinds` need. */
export async function surfacesOf(
  s: SurfaceDeps,
  sid: string,
  kinds: readonly FileKind[],
): Promise<Surfaces> {
  const needStatus = kinds.some((k) => k !== "contained");
  const [p, lists] = await Promise.all([
    places(s, sid),
    needStatus ? statusLists(s, sid) : Promise.resolve({ folders: [], external: [] }),
  ]);
  return { ...lists, ...(p.root === undefined ? {} : { root: p.root }) };
}

/** `file_read`'s check for a person (no role narrowing): the path admitted
 * by its surface, then opened by proof. The caller closes `opened.fh`. */
export async function openForRead(
  s: SurfaceDeps,
  sid: string,
  kind: FileKind,
  path: string,
): Promise<{ admitted: Admitted; opened: Opened } | Refusal> {
  const admitted = await admit(kind, await surfacesOf(s, sid, [kind]), path);
  if (isRefusal(admitted)) return admitted;
  const opened = await openChecked(admitted.real, "read", admitted.identity);
  return isRefusal(opened) ? opened : { admitted, opened };
}
