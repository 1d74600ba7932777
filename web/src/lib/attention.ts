import { computed, effect, type ReadonlySignal, signal } from "@preact/signals";
import type {
  AttentionDecideArgs,
  AttentionDecideResult,
  AttentionItem,
} from "../../../src/contract/attention.js";
import { topics, wire } from "../app-state.js";
import { permission } from "./notifications.js";
import { route } from "./router.js";

/**
 * The attention queue (DR-0062) as the console holds it: what sessions wait
 * on the person for — a permission prompt, a question — while the harness's
 * own dialog stays up in the terminal. The `attention` topic is held for the
 * page's whole life (the count is in the header of every view); its snapshot
 * is the pending items, then every item that changed. The items lately ended
 * are read once per greeting, so a reload still shows how they ended. The
 * linked instances' pending items are read across the mesh every few seconds
 * (the topic carries this instance's only); a decision on one goes to its
 * instance (`to_instance`, contract §8). Ids are each instance's own: items
 * are told apart by instance and id (`itemKey`).
 */

/** Ended items shown in the list this long after their end. */
export const ENDED_SHOWN_MS = 30 * 60_000;
const RECENT_READ = 50;
/** How often the linked instances' pending items are read. */
const MESH_READ_MS = 3000;

/** An item's identity across the mesh. */
export const itemKey = (i: Pick<AttentionItem, "instance" | "id">) => `${i.instance}#${i.id}`;

const topic = topics.hold<{ items: AttentionItem[] }>("attention").state;
/** Read on each greeting: the newest items, ended ones included. */
const recent = signal<AttentionItem[]>([]);
/** What a decision from this tab answered (it shows before the frame). */
const answered = signal<ReadonlyMap<string, AttentionItem>>(new Map());
/** The pending items of the mesh (this instance's among them), last read. */
const meshPending = signal<AttentionItem[]>([]);
/** A decision refused (second, or too late), by item key: the reason. */
export const refusals = signal<ReadonlyMap<string, string>>(new Map());

export const attentionStale = computed(() => topic.stale.value);
export const attentionError = computed(() => topic.error.value);
export const attentionLoaded = computed(() => topic.value.value !== undefined);

/** The later of two views of one item: an ended one wins over a pending one. */
function later(a: AttentionItem | undefined, b: AttentionItem): AttentionItem {
  if (a === undefined) return b;
  if (a.end !== undefined && b.end === undefined) return a;
  if (b.end !== undefined && a.end === undefined) return b;
  return (b.refused?.length ?? 0) >= (a.refused?.length ?? 0) ? b : a;
}

/** Every item the console knows, by key: this instance's from the topic
 * and the reads, the other instances' from the mesh read; of two views of
 * one item the later wins (`later`). */
export const known = computed(() => {
  const map = new Map<string, AttentionItem>();
  const here = wire.instance.value;
  const remote = meshPending.value.filter((i) => i.instance !== here);
  for (const list of [
    recent.value,
    remote,
    topic.value.value?.items ?? [],
    [...answered.value.values()],
  ])
    for (const i of list) map.set(itemKey(i), later(map.get(itemKey(i)), i));
  return map;
});

/** Pending items, oldest first. */
export const pending = computed(() =>
  [...known.value.values()].filter((i) => i.end === undefined).sort(byAsked),
);
export const pendingCount = computed(() => pending.value.length);

/** Ended items, newest end first. */
export const ended = computed(() =>
  [...known.value.values()]
    .filter((i) => i.end !== undefined)
    .sort((a, b) => (b.ended_at ?? 0) - (a.ended_at ?? 0)),
);

export function byAsked(a: AttentionItem, b: AttentionItem): number {
  return a.asked_at - b.asked_at || a.id - b.id;
}

effect(() => {
  wire.generation.value;
  if (wire.state.value !== "open") return;
  wire.request("attention_read", { limit: RECENT_READ }).then(
    (page) => {
      recent.value = page.items;
    },
    () => {},
  );
  const readMesh = () =>
    wire.request("attention_read", { pending: true, limit: 200, scope: "mesh" }).then(
      (page) => {
        // What left the mesh's pending list ended there: remember it ended
        // rather than drop it, so a decision seen pending is not lost.
        const still = new Set(page.items.map(itemKey));
        const gone = meshPending.peek().filter((i) => !still.has(itemKey(i)));
        if (gone.length > 0) recheck(gone);
        meshPending.value = page.items;
      },
      () => {},
    );
  void readMesh();
  const timer = setInterval(readMesh, MESH_READ_MS);
  return () => clearInterval(timer);
});

/** Items of other instances that left their pending list: read how they
 * ended (each on its own instance), so the list shows it. */
function recheck(items: AttentionItem[]): void {
  const here = wire.instance.peek();
  for (const item of items) {
    if (item.instance === here) continue;
    wire
      .request("attention_read", {
        sid: item.sid,
        before: item.id + 1,
        limit: 1,
        scope: "mesh",
      })
      .then(
        (page) => {
          const found = page.items.find((i) => itemKey(i) === itemKey(item));
          if (found === undefined) return;
          const next = new Map(answered.peek());
          next.set(itemKey(found), found);
          answered.value = next;
        },
        () => {},
      );
  }
}

/** A person's decision, from the console. */
export async function decide(
  item: AttentionItem,
  decision: Pick<AttentionDecideArgs, "behavior" | "message" | "always" | "answers">,
): Promise<AttentionDecideResult> {
  // An item of another instance is decided there: `to_instance` is the
  // envelope field that carries the op to it (contract §8).
  const elsewhere = item.instance !== wire.instance.peek();
  const args = {
    sid: item.sid,
    id: item.id,
    ...decision,
    via: "console",
    ...(elsewhere ? { to_instance: item.instance } : {}),
  } as AttentionDecideArgs;
  const result = await wire.request("attention_decide", args);
  const next = new Map(answered.peek());
  next.set(itemKey(result.item), result.item);
  answered.value = next;
  if (result.outcome === "refused") {
    const r = new Map(refusals.peek());
    r.set(itemKey(item), result.reason ?? "refused");
    refusals.value = r;
  }
  return result;
}

/** One session's items, oldest first: what the console holds, and the
 * session's own history read once per greeting. */
export function sessionAttention(sid: string): {
  items: ReadonlySignal<AttentionItem[]>;
  dispose(): void;
} {
  const history = signal<AttentionItem[]>([]);
  const stop = effect(() => {
    wire.generation.value;
    if (wire.state.value !== "open") return;
    wire.request("attention_read", { sid, limit: 200 }).then(
      (page) => {
        history.value = page.items;
      },
      () => {},
    );
  });
  const items = computed(() => {
    const map = new Map<string, AttentionItem>();
    for (const i of history.value) map.set(itemKey(i), i);
    for (const i of known.value.values())
      if (i.sid === sid) map.set(itemKey(i), later(map.get(itemKey(i)), i));
    return [...map.values()].sort(byAsked);
  });
  return { items, dispose: stop };
}

// --- browser notifications -----------------------------------------------

/** Ids already seen pending: the first frame (what was waiting when the page
 * opened) is shown, not announced; each later new one is. */
let seen: Set<string> | undefined;

effect(() => {
  if (topic.value.value === undefined) return;
  const items = pending.value;
  const first = seen === undefined;
  seen ??= new Set();
  for (const item of items) {
    if (seen.has(itemKey(item))) continue;
    seen.add(itemKey(item));
    if (!first) announce(item);
  }
});

/** A browser notification for a new pending item, unless the person is
 * looking at the list already. */
function announce(item: AttentionItem): void {
  if (permission.peek() !== "granted") return;
  if (document.visibilityState === "visible" && route.peek().view === "attention") return;
  try {
    const shown = new Notification(`Needs you: ${item.sid_label ?? item.sid.slice(0, 8)}`, {
      body: `${item.kind === "question" ? "asks a question" : `asks to run ${item.tool}`}: ${summary(item, 200)}`,
      tag: `ccmsg-attention-${itemKey(item)}`,
    });
    shown.onclick = () => {
      focus();
      location.hash = "#/attention";
    };
  } catch {}
}

/** The item's input in one line: a command, a path, or the JSON, cut. */
export function summary(item: AttentionItem, max: number): string {
  if (item.kind === "question" && item.questions !== undefined)
    return item.questions.map((q) => q.question).join(" · ");
  let text = item.input;
  try {
    const input = JSON.parse(item.input) as Record<string, unknown>;
    const main = input.command ?? input.file_path ?? input.path ?? input.url ?? input.pattern;
    if (typeof main === "string") text = main;
  } catch {}
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** How an item ended, in a person's words. */
export function endText(item: AttentionItem): string {
  const by = item.decided_by;
  const who =
    by === undefined
      ? ""
      : ` by ${by.role === "user" ? "you" : `session ${by.sid?.slice(0, 8) ?? "?"}`}${
          by.via === undefined ? "" : ` from the ${by.via}`
        }${by.instance === item.instance ? "" : ` on instance ${by.instance.slice(0, 8)}`}`;
  switch (item.end) {
    case "allowed":
      return `allowed${item.always === true ? " (always)" : ""}${who}`;
    case "denied":
      return `denied${who}`;
    case "answered_in_terminal":
      return "answered in the terminal";
    case "timed_out":
      return "nobody decided in time: answer it in the terminal";
    case "session_gone":
      return "the session ended";
    case "hook_gone":
      return "the hook went away: answer it in the terminal";
    case "at_terminal":
      return "you were at the terminal: answered there";
    case "terminal_only":
      return "answer it in the terminal (it cannot be answered from here)";
    default:
      return "waiting";
  }
}
