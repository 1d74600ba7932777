import { type Static, Type } from "@sinclair/typebox";
import { request, response } from "./envelope.js";
import { NonEmpty, Sid, Timestamp } from "./identifiers.js";

// Files (contract §4.3.4): reading, browsing and editing a session's files on
// the instance that holds it. Every op names a surface (`kind`) so the path is
// checked against that surface's rule, never against "whatever the instance
// can open".

export const FILE_KINDS = [
  /** Inside the session's own root; the path is relative to it and `""` is the
   * root itself. */
  "contained",
  /** Inside a workspace folder the session's editor configuration names; an
   * absolute path, admitted by prefix. */
  "workspace",
  /** One exact file outside both, named by the session's transcript; an
   * absolute path, admitted only as a whole. */
  "external",
] as const;
export type FileKind = (typeof FILE_KINDS)[number];
/** The surface a path is checked against. */
export const FileKind = Type.Union(FILE_KINDS.map((k) => Type.Literal(k)));

/** An external file is admitted alone, so it has no directory to browse or
 * create in: directory-shaped ops take only these two. */
export const DIR_KINDS = ["contained", "workspace"] as const;
export type DirKind = (typeof DIR_KINDS)[number];
export const DirKind = Type.Union(DIR_KINDS.map((k) => Type.Literal(k)));

export const DIR_ENTRY_TYPES = ["file", "dir", "symlink", "other"] as const;
export type DirEntryType = (typeof DIR_ENTRY_TYPES)[number];
export const DirEntryType = Type.Union(DIR_ENTRY_TYPES.map((t) => Type.Literal(t)));

/** Size on disk, in bytes. */
const ByteSize = Type.Integer({ minimum: 0 });

// --- dir_list ---

/** The caller's role narrows what is visible, so a session and a person may
 * see different entries for the same path. */
export const DirListArgs = Type.Object({
  sid: Sid,
  kind: DirKind,
  /** Absent = the surface's root. */
  path: Type.Optional(Type.String()),
});
export type DirListArgs = Static<typeof DirListArgs>;

/** One directory entry. A symlink is reported as a symlink: the listing says
 * what the entry is, not what it points at. */
export const DirEntry = Type.Object({
  name: NonEmpty,
  type: DirEntryType,
  /** Files only. */
  size: Type.Optional(ByteSize),
  mtime_at: Type.Optional(Timestamp),
});
export type DirEntry = Static<typeof DirEntry>;

export const DirListResult = Type.Object({
  sid: Sid,
  /** Normalized, so the client can key its view on it. */
  path: Type.String(),
  entries: Type.Array(DirEntry),
});
export type DirListResult = Static<typeof DirListResult>;
export const DirListRequest = request("dir_list", DirListArgs);
export const DirListResponse = response("dir_list", DirListResult);

// --- file_read ---

export const FileReadArgs = Type.Object({ sid: Sid, kind: FileKind, path: NonEmpty });
export type FileReadArgs = Static<typeof FileReadArgs>;
export const FileReadResult = Type.Object({
  sid: Sid,
  path: Type.String(),
  /** The whole file on disk, whatever part of it was returned. */
  size: ByteSize,
  /** Cut at the instance's read limit (about 512 KiB in the reference): the
   * content is then only the head, which a client must not mistake for the
   * whole file. */
  truncated: Type.Boolean(),
  /** The head sniffed as binary: text would be unfaithful, so none is sent. */
  binary: Type.Boolean(),
  /** Empty when `binary`. */
  content: Type.String(),
  /** Also the lock token an edit hands back as `expected_mtime_at`. */
  mtime_at: Timestamp,
});
export type FileReadResult = Static<typeof FileReadResult>;
export const FileReadRequest = request("file_read", FileReadArgs);
export const FileReadResponse = response("file_read", FileReadResult);

// --- file_write ---

/** Hands a file to the session: it lands in the session's inbox directory, not
 * wherever the caller likes, which is why no surface is named. */
export const FileWriteArgs = Type.Object({
  sid: Sid,
  /** Relative to the session's cwd. */
  path: NonEmpty,
  content: Type.String(),
});
export type FileWriteArgs = Static<typeof FileWriteArgs>;
export const FileWriteResult = Type.Object({ sid: Sid, path: Type.String() });
export type FileWriteResult = Static<typeof FileWriteResult>;
export const FileWriteRequest = request("file_write", FileWriteArgs);
export const FileWriteResponse = response("file_write", FileWriteResult);

// --- file_create ---

/** Never overwrites and never creates parent directories: creating is the one
 * write that cannot destroy anything. */
export const FileCreateArgs = Type.Object({
  sid: Sid,
  kind: DirKind,
  path: NonEmpty,
  /** Usually empty. */
  content: Type.String(),
});
export type FileCreateArgs = Static<typeof FileCreateArgs>;
export const FileCreateResult = Type.Object({ sid: Sid, path: Type.String() });
export type FileCreateResult = Static<typeof FileCreateResult>;
export const FileCreateRequest = request("file_create", FileCreateArgs);
export const FileCreateResponse = response("file_create", FileCreateResult);

// --- file_edit ---

/** Overwrites in place, and only the file the caller last read: the expected
 * mtime and size are the lock, and any difference is `file_conflict` rather
 * than a silent loss of someone else's change. */
export const FileEditArgs = Type.Object({
  sid: Sid,
  kind: FileKind,
  path: NonEmpty,
  content: Type.String(),
  expected_mtime_at: Timestamp,
  expected_size: ByteSize,
});
export type FileEditArgs = Static<typeof FileEditArgs>;
export const FileEditResult = Type.Object({
  sid: Sid,
  path: Type.String(),
  size: ByteSize,
  /** The new lock token for the next edit. */
  mtime_at: Timestamp,
});
export type FileEditResult = Static<typeof FileEditResult>;
export const FileEditRequest = request("file_edit", FileEditArgs);
export const FileEditResponse = response("file_edit", FileEditResult);

// --- file_delete ---

/** Regular files only — no directories, no symlinks, no recursion — so one
 * mistaken call removes at most one file. */
export const FileDeleteArgs = Type.Object({ sid: Sid, kind: DirKind, path: NonEmpty });
export type FileDeleteArgs = Static<typeof FileDeleteArgs>;
export const FileDeleteResult = Type.Object({ sid: Sid, path: Type.String() });
export type FileDeleteResult = Static<typeof FileDeleteResult>;
export const FileDeleteRequest = request("file_delete", FileDeleteArgs);
export const FileDeleteResponse = response("file_delete", FileDeleteResult);

// --- file_find ---

export const FILE_FIND_HIT_TYPES = ["file", "dir", "symlink"] as const;
export type FileFindHitType = (typeof FILE_FIND_HIT_TYPES)[number];

export const FileFindArgs = Type.Object({
  sid: Sid,
  kind: DirKind,
  /** Where to start, in the surface's path form; absent = its root. */
  root: Type.Optional(Type.String()),
  /** Whitespace-separated words that must all occur in the path
   * (case-insensitive); `-word` excludes. A query with nothing to include
   * matches nothing, so an empty query is valid and finds nothing. */
  query: Type.String(),
  /** Absent = true: ignored files are rarely what a person is looking for. */
  respect_gitignore: Type.Optional(Type.Boolean()),
});
export type FileFindArgs = Static<typeof FileFindArgs>;

/** A match, its path shaped like the chosen surface's paths so it can be
 * passed straight to `file_read`. */
export const FileFindHit = Type.Object({
  path: Type.String(),
  type: Type.Union(FILE_FIND_HIT_TYPES.map((t) => Type.Literal(t))),
});
export type FileFindHit = Static<typeof FileFindHit>;

export const FileFindResult = Type.Object({
  sid: Sid,
  hits: Type.Array(FileFindHit),
  /** More matched than the instance returns; a narrower query sees the rest. */
  truncated: Type.Boolean(),
});
export type FileFindResult = Static<typeof FileFindResult>;
export const FileFindRequest = request("file_find", FileFindArgs);
export const FileFindResponse = response("file_find", FileFindResult);

// --- file_stat_batch ---

/** Turns absolute paths (e.g. ones mentioned in a transcript) into something
 * `file_read` accepts. */
export const FileStatBatchArgs = Type.Object({
  sid: Sid,
  /** Absolute. Anything else simply misses. */
  paths: Type.Array(Type.String()),
});
export type FileStatBatchArgs = Static<typeof FileStatBatchArgs>;

/** The first surface that admits the path as a regular file. */
export const FileStatEntry = Type.Object({
  kind: FileKind,
  /** Ready to pass to `file_read` with `kind`. */
  path: Type.String(),
});
export type FileStatEntry = Static<typeof FileStatEntry>;

export const FileStatBatchResult = Type.Object({
  /** One slot per input path, same order. `null` — the only null on the wire —
   * is any miss, with no reason: telling "absent" from "forbidden" would make
   * the op an existence oracle. */
  results: Type.Array(Type.Union([FileStatEntry, Type.Null()])),
});
export type FileStatBatchResult = Static<typeof FileStatBatchResult>;
export const FileStatBatchRequest = request("file_stat_batch", FileStatBatchArgs);
export const FileStatBatchResponse = response("file_stat_batch", FileStatBatchResult);

// --- dir_tree ---

/** For choosing a new session's cwd (hence the `launcher` capability): it
 * walks configured roots, not a session's surfaces, so it names no `sid`. */
export const DirTreeArgs = Type.Object({
  /** Configured roots, or directories below them. */
  roots: Type.Array(NonEmpty),
  /** How many levels to walk below each root. */
  depth: Type.Optional(Type.Integer({ minimum: 1 })),
  /** Substring of the root-relative path. Matches keep their ancestors, so
   * every kept node is reachable from a root. */
  filter: Type.Optional(Type.String()),
});
export type DirTreeArgs = Static<typeof DirTreeArgs>;

/** One directory node. `children` absent = the walk stopped here and the node
 * can be expanded by a later call; an empty array = it has no subdirectories.
 * The two differ so a client knows whether to offer expansion. */
export const DirTreeEntry = Type.Recursive(
  (Self) =>
    Type.Object({
      path: Type.String(),
      children: Type.Optional(Type.Array(Self)),
    }),
  { $id: "DirTreeEntry" },
);
export type DirTreeEntry = Static<typeof DirTreeEntry>;

export const DirTreeResult = Type.Object({ entries: Type.Array(DirTreeEntry) });
export type DirTreeResult = Static<typeof DirTreeResult>;
export const DirTreeRequest = request("dir_tree", DirTreeArgs);
export const DirTreeResponse = response("dir_tree", DirTreeResult);
