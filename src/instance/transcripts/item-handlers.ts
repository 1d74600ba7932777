import { readConfig } from "../../config/config.js";
import { MAX_FRAME_BYTES } from "../../contract/constants.js";
import { ContractError, contractError } from "../../contract/errors.js";
import type { InstanceId } from "../../contract/identifiers.js";
import {
  DEFAULT_DUMP_PRESETS,
  dumpSelectors,
  presetTable,
  selectTypes,
} from "../../contract/transcript-select.js";
import type { DumpIds, DumpPreset } from "../../contract/transcripts.js";
import { configFile } from "../../state/paths.js";
import type { Handlers } from "../dispatch.js";
import { writeDump } from "./dump.js";
import type { Transcripts } from "./engine.js";
import { checkAgentId, noTranscript } from "./handlers.js";
import { type ItemIndex, type ItemRange, readSlice } from "./items.js";

// Typed transcript ops (contract §4.3.3): `transcript_items_read`,
// `session_dump_write`, `dump_presets_read`. Items come from the transcript
// feed's item index (instance/transcripts/items.ts), re-read from the file.

/** The most items one `transcript_items_read` answers (a larger `limit` is
 * narrowed to it). */
export const ITEMS_READ_LIMIT = 500;
/** Room for items and ledger in one reply (the envelope and `next` are small). */
const READ_BUDGET = MAX_FRAME_BYTES - 16 * 1024;

/** What the typed transcript ops use. */
export interface TranscriptItemDeps {
  instanceId: InstanceId;
  /** The instance's environment (ccmsg's config file, tools on PATH). */
  env: NodeJS.ProcessEnv;
  transcripts: Transcripts;
  /** Where `session_dump_write` writes (`<state dir>/dumps`). */
  dumpDir: string;
}

export function transcriptItemsHandlers(s: TranscriptItemDeps): Handlers {
  return {
    async transcript_items_read(args) {
      const selection = selectTypes(args.types, await presetsFor(s, args.types));
      const limit = Math.min(args.limit ?? ITEMS_READ_LIMIT, ITEMS_READ_LIMIT);
      const range: ItemRange = { ...rangeOf(args), sinceId: args.since_id };
      const slice = await withIndex(s, args.sid, args.agent_id, (index) =>
        readSlice(index, range, selection.keeps, limit, READ_BUDGET),
      );
      return {
        items: slice.items,
        ...(slice.next === undefined ? {} : { next: slice.next }),
        ...(slice.ids.length === 0 ? {} : { ids: slice.ids }),
      };
    },

    async session_dump_write(args) {
      const selectors = dumpSelectors(args);
      const table = await presetsFor(s, selectors);
      // Any name may be asked for; one that is not configured is not found.
      if (args.preset !== undefined && !table.has(args.preset))
        throw contractError("not_found", `no dump preset named "${args.preset}"`);
      const selection = selectTypes(selectors, table);
      const written = await withIndex(s, args.sid, args.agent_id, (index) =>
        writeDump(index, s.dumpDir, {
          sid: args.sid,
          agentId: args.agent_id,
          types: selection.applied,
          range: rangeOf(args),
          keeps: selection.keeps,
          writtenAt: Date.now(),
        }),
      );
      return { ...written, ids: fitIds(written.ids), instance: s.instanceId };
    },

    async dump_presets_read() {
      return { presets: await presets(s) };
    },
  };
}

/** The configured presets, read afresh (an edit needs no restart); the
 * built-in ones when the configuration names none. A broken configuration
 * is not the caller's fault: `internal_error`, naming the key. */
async function presets(s: TranscriptItemDeps): Promise<DumpPreset[]> {
  try {
    const config = await readConfig(configFile(undefined, s.env));
    return config.dump_presets ?? [...DEFAULT_DUMP_PRESETS];
  } catch (error) {
    if (error instanceof ContractError) throw contractError("internal_error", error.message);
    throw error;
  }
}

/** The presets a selection refers to, read only when it names one. */
async function presetsFor(s: TranscriptItemDeps, selectors: readonly string[] | undefined) {
  return presetTable(selectors?.some((t) => t.includes("@")) ? await presets(s) : []);
}

function rangeOf(args: {
  since_at?: number;
  since_uuid?: string;
  until_at?: number;
  until_uuid?: string;
}): ItemRange {
  return {
    sinceAt: args.since_at,
    sinceUuid: args.since_uuid,
    untilAt: args.until_at,
    untilUuid: args.until_uuid,
  };
}

/** Run `use` on the caught-up item index of a session's (or an agent's)
 * transcript, holding its feed meanwhile; `not_found` when there is none. */
async function withIndex<T>(
  s: TranscriptItemDeps,
  sid: string,
  agentId: string | undefined,
  use: (index: ItemIndex) => Promise<T>,
): Promise<T> {
  checkAgentId(agentId);
  const feed = await s.transcripts.feeds.open(sid, agentId);
  if (feed === undefined) throw noTranscript(sid, agentId);
  try {
    // Lines written just before the request are part of the answer.
    await feed.refresh();
    return await use(feed.parts.items);
  } finally {
    feed.release();
  }
}

/** The ledger as a reply carries it: the file holds all of it; the reply
 * keeps what fits well within one frame. */
function fitIds(ids: DumpIds): DumpIds {
  let bytes = 0;
  const room = MAX_FRAME_BYTES / 2;
  const out: DumpIds = [];
  for (const entry of ids) {
    bytes += JSON.stringify(entry).length * 3 + 1;
    if (bytes > room) break;
    out.push(entry);
  }
  return out;
}
