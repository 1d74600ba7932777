import { useState } from "preact/hooks";
import type { KvEntry } from "../../../src/contract/kv.js";
import {
  type KeyedReservation,
  liveReservations,
  RESERVATIONS_NS,
} from "../../../src/contract/reservations.js";
import { topics, wire } from "../app-state.js";
import { useTopic } from "../conn/topics.js";
import { href } from "../lib/router.js";
import { labelOf, rowsBySid } from "../lib/sessions.js";
import { now, untilTime } from "../lib/time.js";
import { Badge, describeError, ErrorText, StaleNote, Time } from "../ui/common.js";

/**
 * File reservations between agents (DR-0041): the live ones, from KV
 * namespace `reservations` (`kv:reservations`, live: one appears when an
 * agent runs `ccmsg reserve` and leaves when it is released or swept after
 * its expiry). Expired entries not yet swept are not shown, as no reader
 * counts them. The person may release any of them.
 */
export function ReservationsView() {
  const topic = useTopic<{ entries: KvEntry[] }>(topics, `kv:${RESERVATIONS_NS}`)!;
  const at = now.value;
  const list = liveReservations(topic.value.value?.entries ?? [], at);
  return (
    <div class="view reservations-view">
      <div class="view-head">
        <h1>
          File reservations <span class="count">{list.length}</span>
        </h1>
      </div>
      <p class="hint">
        Paths agents reserved with <code>ccmsg reserve</code>. An edit by another session inside an
        exclusive one is warned about or blocked by its hook; each expires by itself.
      </p>
      <StaleNote stale={topic.stale.value && topic.value.value !== undefined} what="reservations" />
      {topic.error.value !== undefined && <ErrorText error={describeError(topic.error.value)} />}
      {list.length === 0 ? (
        <p class="empty">
          {topic.value.value === undefined ? "Loading…" : "No live reservations."}
        </p>
      ) : (
        <table class="kv-table reservations-table">
          <thead>
            <tr>
              <th scope="col">Path</th>
              <th scope="col">Held by</th>
              <th scope="col">Kind</th>
              <th scope="col" class="res-reason">
                Reason
              </th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((r) => (
              <Row key={r.key} r={r} at={at} />
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function Row({ r, at }: { r: KeyedReservation; at: number }) {
  const [error, setError] = useState<string | undefined>(undefined);
  const sid = r.holder.sid;
  // The session's own name on screen when the console knows it.
  const row = sid === null ? undefined : rowsBySid.value.get(sid);
  const who =
    row !== undefined
      ? labelOf(row)
      : (r.holder.name ?? (sid === null ? "the person" : sid.slice(0, 8)));
  return (
    <tr>
      <td class="mono kv-value">{r.glob}</td>
      <td>
        {sid === null ? (
          who
        ) : (
          <a href={href({ view: "session", sid })} title={sid}>
            {who}
          </a>
        )}
      </td>
      <td>
        <Badge tone={r.exclusive ? "warn" : "muted"}>{r.exclusive ? "exclusive" : "shared"}</Badge>
      </td>
      <td class="res-reason">{r.reason ?? ""}</td>
      <td>
        <Time at={r.expires_at}>{untilTime(r.expires_at, at)}</Time>
      </td>
      <td>
        <button
          type="button"
          class="small danger"
          disabled={wire.state.value !== "open"}
          onClick={() => {
            if (!confirm(`Release ${r.glob} (held by ${who})?`)) return;
            wire
              .request("kv_delete", { ns: RESERVATIONS_NS, key: r.key })
              .catch((e) => setError(describeError(e)));
          }}
        >
          Release<span class="visually-hidden"> {r.glob}</span>
        </button>
        <ErrorText error={error} />
      </td>
    </tr>
  );
}
