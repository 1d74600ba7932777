import type { TeamBoard } from "../../board/team-board.js";
import type { Clock } from "../../util/clock.js";
import type { Logger } from "../../util/logger.js";
import type { Contribution } from "../dispatch.js";
import type { InstanceStore } from "../store/instance-store.js";
import type { TopicHub } from "../topic-hub.js";
import { kvHandlers } from "./handlers.js";
import { fileKv, Kv } from "./kv.js";
import { ReservationSweeper } from "./reservation-sweeper.js";

/** What KV is built on. */
export interface KvDeps {
  store: Pick<InstanceStore, "kv" | "queue">;
  /** The team store (DR-0046): KV lives there when the board does. */
  team?: Pick<TeamBoard, "kv">;
  hub: TopicHub;
  clock: Clock;
  log: Logger;
}

/** The shared key-value store, in the team store or the instance's file,
 * and the sweep of expired file reservations (DR-0041), which are entries. */
export function registerKv(
  deps: KvDeps,
): Contribution & { kv: Kv; reservations: ReservationSweeper } {
  const { store, clock } = deps;
  const kv = new Kv(deps.team?.kv ?? fileKv(store.kv, (w) => store.queue.run(w)), deps.hub, clock);
  const reservations = new ReservationSweeper(kv, clock, deps.log);
  return { kv, reservations, handlers: kvHandlers({ kv }) };
}
