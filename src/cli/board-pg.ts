import { boardListText, listOf, listWindow, workItemLine } from "../board/list.js";
import {
  boardSummaryPg,
  claimWorkItemPg,
  moveWorkItemPg,
  upsertWorkItemPg,
} from "../board/pg-board.js";
import { LANES } from "../contract/ecc/lanes.js";
import { ContractError } from "../contract/errors.js";
import { PgBoardStore } from "../store/pg/board-store.js";
import { input } from "./board-input.js";
import { type Flags, print, sessionId } from "./options.js";

type Values = Record<string, string | boolean | undefined> &
  Flags & {
    lane?: string;
    limit?: string;
    owner?: string;
    as?: string;
    status?: string;
    title?: string;
    id?: string;
    "session-id"?: string;
  };

/**
 * `ccmsg board …` on a team board in PostgreSQL (DR-0046): the same verbs,
 * rules and output as on the instance's file; the running instances hear
 * every change through the database. Syncs stay with the file.
 */
export async function boardOnPostgres(
  verb: string | undefined,
  values: Values,
  positionals: string[],
  url: string,
): Promise<void> {
  if (verb === "sync")
    throw new ContractError(
      "invalid_args",
      "board sync writes the instance's own board, not a team board",
    );
  const store = await PgBoardStore.open(url);
  try {
    switch (verb) {
      case "add":
      case "update": {
        const id = verb === "update" ? positionals[0] : values.id;
        if (verb === "update" && id === undefined)
          throw new ContractError("invalid_args", "usage: ccmsg board update <id> [--title …]");
        if (verb === "update" && (await store.items().get(id!)) === undefined)
          throw new ContractError("not_found", `work item ${id} not found`);
        if (verb === "add" && values.title === undefined)
          throw new ContractError(
            "invalid_args",
            "usage: ccmsg board add --title <t> [--priority p] …",
          );
        const item = await upsertWorkItemPg(store, input(values, id));
        print(values, { item }, () => workItemLine(item));
        return;
      }
      case "list": {
        const limit = values.limit === undefined ? 20 : Number(values.limit);
        const window = listWindow(values.lane, limit);
        const list = listOf(await boardSummaryPg(store, window), values.lane, limit);
        print(values, list, () => boardListText(list));
        return;
      }
      case "show": {
        const id = positionals[0];
        if (id === undefined)
          throw new ContractError("invalid_args", "usage: ccmsg board show <id>");
        const item = await store.items().get(id);
        if (item === undefined) throw new ContractError("not_found", `work item ${id} not found`);
        print(values, { item }, () => `${workItemLine(item)}\n${JSON.stringify(item, null, 2)}`);
        return;
      }
      case "claim": {
        const sid = sessionId(values);
        const owner = values.owner ?? sid;
        if (owner === undefined)
          throw new ContractError(
            "invalid_args",
            "claim requires --owner (or run it inside a session)",
          );
        const result = await claimWorkItemPg(store, {
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
        const result = await moveWorkItemPg(store, id, lane);
        print(values, result, () => `moved ${workItemLine(result.item)}`);
        return;
      }
      default:
        throw new ContractError(
          "invalid_args",
          "usage: ccmsg board add|list|show|claim|move|update … --store postgres://…",
        );
    }
  } finally {
    await store.close();
  }
}
