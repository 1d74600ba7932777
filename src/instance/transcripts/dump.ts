import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { DumpIds } from "../../contract/transcripts.js";
import { openAtomicFile } from "../../state/atomic-write.js";
import { nodeCrypto } from "../../util/lazy-builtins.js";
import type { ItemIndex, ItemRange } from "./items.js";
import { Ledger } from "./ledger.js";

// `session_dump_write` (contract §4.3.3, §10.7): the selected items of a
// transcript written as a `SessionDumpFile` under `<state dir>/dumps/`. The
// file is written as the items are re-read — never built as one string — into
// a temp file renamed into place, so a dump of a 200 MB transcript costs a
// bounded buffer, and a reader never sees half a dump.

export interface DumpRequest {
  sid: string;
  agentId?: string;
  /** The selection as applied (presets expanded, exclusions kept). */
  types: string[];
  range: ItemRange;
  keeps: (type: string) => boolean;
  writtenAt: number;
}

export interface DumpWritten {
  path: string;
  entries: Record<string, number>;
  ids: DumpIds;
  bytes: number;
}

/** Write a dump of `index` into `dir` (made 0700 when missing; the file 0600). */
export async function writeDump(
  index: ItemIndex,
  dir: string,
  request: DumpRequest,
): Promise<DumpWritten> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const stamp = new Date(request.writtenAt).toISOString().replace(/[:.]/g, "-");
  const who = request.agentId === undefined ? request.sid : `${request.sid}-${request.agentId}`;
  const path = join(dir, `${who}-${stamp}-${nodeCrypto().randomBytes(3).toString("hex")}.json`);
  const file = await openAtomicFile(path);
  const entries: Record<string, number> = {};
  const ledger = new Ledger(index.info);
  try {
    const head = {
      sid: request.sid,
      ...(request.agentId === undefined ? {} : { agent_id: request.agentId }),
      written_at: request.writtenAt,
      types: request.types,
    };
    await file.write(`${JSON.stringify(head).slice(0, -1)},"items":[`);
    let first = true;
    for await (const batch of index.items(request.range, request.keeps)) {
      const parts: string[] = [];
      for (const item of batch) {
        parts.push(`${first ? "" : ","}\n${JSON.stringify(item)}`);
        first = false;
        entries[item.type] = (entries[item.type] ?? 0) + 1;
        ledger.add(item);
      }
      await file.write(parts.join(""));
    }
    const ids = ledger.ids();
    await file.write(`\n],"ids":${JSON.stringify(ids)}}\n`);
    const bytes = await file.commit();
    return { path, entries, ids, bytes };
  } catch (error) {
    await file.abort();
    throw error;
  }
}
