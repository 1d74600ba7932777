import { boardListText, listBoard, workItemLine } from "../board/list.js";
import { configuredStore } from "../board/team-board.js";
import { sessionId } from "../client/flags.js";
import { LANES } from "../contract/ecc/lanes.js";
import { ContractError } from "../contract/errors.js";
import { resolveStateDir, stateFiles } from "../state/paths.js";
import { eccOperation, isEccStateStore } from "../store/ecc-state-store.js";
import { openStateStore } from "../store/migrated-store.js";
import { isPostgresUrl } from "../store/pg/url.js";
import type { StateStore } from "../store/state-store.js";
import { WorkItemsStore } from "../store/work-items.js";
import type { BoardAccess } from "./board-access.js";
import { input } from "./board-input.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";

const USAGE =
  "ccmsg board add|list|show|claim|move|update|sync … [--db PATH | --store postgres://…]";

const FIELDS = {
  id: { type: "string" },
  title: { type: "string" },
  status: { type: "string" },
  priority: { type: "string" },
  owner: { type: "string" },
  url: { type: "string" },
  source: { type: "string" },
  "source-id": { type: "string" },
  "repo-root": { type: "string" },
  "session-id": { type: "string" },
  "metadata-json": { type: "string" },
  as: { type: "string" },
  limit: { type: "string" },
  lane: { type: "string" },
  db: { type: "string" },
  store: { type: "string" },
} as const;

/**
 * `ccmsg board …` — the work board, straight from the store: the instance's
 * file, or a team board in PostgreSQL (DR-0046). A running instance notices
 * the change and tells its `work_items` watchers.
 */
export const board: Command = async (argv) => {
  const [verb, ...rest] = argv;
  if (verb === "sync") return (await import("./board-sync.js")).boardSync(rest);
  const { values, positionals } = parse(rest, FIELDS, USAGE);
  const team = teamStore(values);
  const access =
    team === undefined
      ? await fileBoard(values.db ?? stateFiles(resolveStateDir(values["state-dir"])).database)
      : await (await import("./board-pg.js")).teamBoard(team);
  try {
    switch (verb) {
      case "add":
      case "update": {
        const id = verb === "update" ? positionals[0] : values.id;
        if (verb === "update" && id === undefined)
          throw new ContractError("invalid_args", "usage: ccmsg board update <id> [--title …]");
        if (verb === "update" && (await access.get(id!)) === undefined)
          throw new ContractError("not_found", `work item ${id} not found`);
        if (verb === "add" && values.title === undefined)
          throw new ContractError(
            "invalid_args",
            "usage: ccmsg board add --title <t> [--priority p] …",
          );
        const item = await access.upsert(input(values, id));
        print(values, { item }, () => workItemLine(item));
        return;
      }
      case "list": {
        const list = await access.list(
          values.lane,
          values.limit === undefined ? undefined : Number(values.limit),
        );
        print(values, list, () => boardListText(list));
        return;
      }
      case "show": {
        const id = positionals[0];
        if (id === undefined)
          throw new ContractError("invalid_args", "usage: ccmsg board show <id>");
        const item = await access.get(id);
        if (item === undefined) throw new ContractError("not_found", `work item ${id} not found`);
        print(values, { item }, () => `${workItemLine(item)}\n${JSON.stringify(item, null, 2)}`);
        return;
      }
      case "claim": {
        // Inside a session the claimer defaults to that session, as an agent.
        const sid = sessionId(values);
        const owner = values.owner ?? sid;
        if (owner === undefined)
          throw new ContractError(
            "invalid_args",
            "claim requires --owner (or run it inside a session)",
          );
        const result = await access.claim({
          id: positionals[0],
          owner,
          as: values.as ?? (values.owner === undefined && sid !== undefined ? "agent" : undefined),
          sessionId: values["session-id"],
          status: values.status,
        });
        print(values, result, () =>
          result.claimed
            ? `claimed ${workItemLine(result.item)}`
            : "nothing to claim: no unassigned open items",
        );
        return;
      }
      case "move": {
        const [id, lane] = positionals;
        if (id === undefined || lane === undefined)
          throw new ContractError(
            "invalid_args",
            `usage: ccmsg board move <id> <${LANES.join("|")}>`,
          );
        const result = await access.move(id, lane);
        print(values, result, () => `moved ${workItemLine(result.item)}`);
        return;
      }
      default:
        throw new ContractError("invalid_args", `usage: ${USAGE}`);
    }
  } finally {
    await access.close();
  }
};

/** The instance's own board file (same busy rules as every writer: a 5 s
 * wait, then STATE_STORE_BUSY), or a state store of ECC's own tools, each
 * operation under ECC's lock. */
async function fileBoard(path: string): Promise<BoardAccess> {
  const rules = await import("../board/board.js");
  if (isEccStateStore(path)) {
    const op = <T>(fn: (store: StateStore) => T) => Promise.resolve(eccOperation(path, fn));
    return {
      get: (id) => op((s) => new WorkItemsStore(s.db).get(id)),
      upsert: (i) => op((s) => rules.upsertWorkItem(s, i)),
      list: (lane, limit) => op((s) => listBoard(s, lane, limit)),
      claim: (args) => op((s) => rules.claimWorkItem(s, args)),
      move: (id, lane) => op((s) => rules.moveWorkItem(s, id, lane)),
      close: async () => {},
    };
  }
  const store = openStateStore(path);
  return {
    get: async (id) => new WorkItemsStore(store.db).get(id),
    upsert: async (i) => rules.upsertWorkItem(store, i),
    list: async (lane, limit) => listBoard(store, lane, limit),
    claim: async (args) => rules.claimWorkItem(store, args),
    move: async (id, lane) => rules.moveWorkItem(store, id, lane),
    close: async () => store.close(),
  };
}

/** The team board's URL (DR-0046): `--store`, else the config's `store`
 * unless `--db` names a file. */
function teamStore(values: { db?: string; store?: string }): string | undefined {
  if (values.store !== undefined) {
    if (values.db !== undefined)
      throw new ContractError("invalid_args", "--db and --store name two boards: give one");
    if (!isPostgresUrl(values.store))
      throw new ContractError("invalid_args", "--store must be a postgres://… URL");
    return values.store;
  }
  if (values.db !== undefined) return undefined;
  return configuredStore(process.env);
}
