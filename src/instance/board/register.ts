import { MutationRunner } from "../../board/runner.js";
import type { TeamBoard } from "../../board/team-board.js";
import type { CcmsgConfig } from "../../config/config.js";
import type { Logger } from "../../util/logger.js";
import type { Contribution } from "../dispatch.js";
import type { InstanceStore } from "../store/instance-store.js";
import type { TopicHub } from "../topic-hub.js";
import { BoardSyncScheduler } from "./board-sync.js";
import { serveTeamWorkItems, serveWorkItems, type WorkItemsTopic } from "./work-items-topic.js";

/** What the work board is built on. */
export interface BoardDeps {
  store: Pick<InstanceStore, "db" | "state">;
  /** The board in PostgreSQL, shared with other instances (DR-0046). */
  team?: TeamBoard;
  hub: TopicHub;
  /** ccmsg's config as read at start (the interval syncs). */
  config: CcmsgConfig;
  env: NodeJS.ProcessEnv;
  log: Logger;
}

/** What the board adds: its topic, the mutation runner the control pane
 * writes through, and the interval syncs (started once the socket listens).
 * It has no ops: the control-pane API is HTTP (http/listener.ts). */
export interface BoardServed extends Contribution {
  board: WorkItemsTopic;
  runner: MutationRunner;
  boardSync: { start(): void; dispose(): void };
}

export function registerBoard(deps: BoardDeps): BoardServed {
  const { store, team, config, log } = deps;
  team?.logTo(log);
  const board =
    team === undefined ? serveWorkItems(store.db, deps.hub) : serveTeamWorkItems(team, deps.hub);
  const runner = new MutationRunner(undefined);
  // The interval syncs write the instance's own board, not a team board.
  const boardSync = team
    ? {
        start: () => {
          if (config.sync !== undefined) log.warn("board syncs are not run on a team board");
        },
        dispose() {},
      }
    : new BoardSyncScheduler({
        ...{ config, env: deps.env, cwd: process.cwd(), log, runner },
        ...{ db: store.db, dbPath: store.state.path, changed: (items) => board.offer(items) },
      });
  return { board, runner, boardSync, handlers: {} };
}
