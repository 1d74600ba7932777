import { type Static, type TObject, type TSchema, Type } from "@sinclair/typebox";
import type { ClaimResult } from "../board/board.js";
import { boardListText, listBoard, listOf, listWindow, workItemLine } from "../board/list.js";
import type { Client } from "../client/client.js";
import type { Flags } from "../client/flags.js";
import { peersAcross } from "../client/peers-across.js";
import { knownSessions, resolveSid, wholeSid } from "../client/sid-resolve.js";
import { ATTENTION_GRANTS_NS, type AttentionDecideArgs } from "../contract/attention.js";
import { LANES } from "../contract/ecc/lanes.js";
import { contractError } from "../contract/errors.js";
import type { KvEntry } from "../contract/kv.js";
import type { LastLiveSession, PeerInfo } from "../contract/peers.js";
import { RESERVATIONS_NS } from "../contract/reservations.js";
import { resolveStateDir, stateFiles } from "../state/paths.js";
import type { PgBoardStore } from "../store/pg/board-store.js";
import type { StateStore } from "../store/state-store.js";
import { needsSession, type SessionLink } from "./link.js";

// The MCP server's tools: each one a thin call onto what the CLI does, with a
// short description and a small input schema (every call sends them to the
// model, so they are kept cheap in tokens). Results are compact JSON or the
// CLI's own one-line-per-row text.

export interface ToolContext {
  /** Greeted as the session the server speaks for. */
  link: SessionLink;
  /** Greeted as the person: the key-value store is theirs alone (contract
   * §11, role `user`), so its tools speak as the person. */
  person: SessionLink;
  flags: Flags;
}

export interface Tool {
  description: string;
  input: TSchema;
  /** Called with arguments the server has validated against `input`. */
  run(args: unknown, ctx: ToolContext): Promise<string>;
}

/** A tool whose `run` reads its arguments as its input schema types them
 * (the server validates them first: mcp/server.ts). */
function tool<S extends TObject>(t: {
  description: string;
  input: S;
  run(args: Static<S>, ctx: ToolContext): Promise<string>;
}): Tool {
  return t;
}

const str = (description: string) => Type.String({ description });
const laneSchema = Type.Union(LANES.map((l) => Type.Literal(l)));
const none = Type.Object({});
/** What a tool's session argument takes. */
const SID_ARG = "sid, a unique prefix of one (4+ hex), or @title";

/** The session a tool acts as; refused when the server knows none. */
function actor(ctx: ToolContext, tool: string): string {
  if (ctx.link.sid === undefined) throw needsSession(tool);
  return ctx.link.sid;
}

const json = (value: unknown) => JSON.stringify(value);

/** Act on file reservations (DR-0041) over the person's connection (KV is
 * theirs), given the namespace as read there; the subscription the read
 * made is let go after. */
function reservationsTurn<T>(
  ctx: ToolContext,
  fn: (client: Client, live: KvEntry[]) => Promise<T>,
): Promise<T> {
  return ctx.person.use(async (client) => {
    const { readNamespace } = await import("../client/reservations.js");
    try {
      return await fn(client, await readNamespace(client));
    } finally {
      await client.call("topic_unsubscribe", { topic: `kv:${RESERVATIONS_NS}` }).catch(() => {});
    }
  });
}

/** Open the state store for one board call (the CLI's rules and locks). */
async function withBoard<T>(ctx: ToolContext, use: (store: StateStore) => T): Promise<T> {
  const { openStateStore } = await import("../store/migrated-store.js");
  const store = openStateStore(stateFiles(resolveStateDir(ctx.flags["state-dir"])).database);
  try {
    return use(store);
  } finally {
    store.close();
  }
}

/**
 * One board call on the team board in PostgreSQL when the config names one
 * (DR-0046), else on the instance's file — the same board the instance and
 * `ccmsg board` use.
 */
async function onBoard<T>(
  ctx: ToolContext,
  file: (store: StateStore) => T,
  team: (store: PgBoardStore) => Promise<T>,
): Promise<T> {
  const { configuredStore } = await import("../board/team-board.js");
  const url = configuredStore(process.env);
  if (url === undefined) return withBoard(ctx, file);
  const { PgBoardStore } = await import("../store/pg/board-store.js");
  const store = await PgBoardStore.open(url);
  try {
    return await team(store);
  } finally {
    await store.close();
  }
}

/** The sid a tool's argument names (client/sid-resolve.ts): the sessions
 * are read, once per call, only when it is no whole sid. */
async function sidOf(ctx: ToolContext, typed: string, what: string): Promise<string> {
  const whole = wholeSid(typed);
  if (whole !== undefined) return whole;
  const held = await ctx.link.use((client) => peersAcross(client));
  return resolveSid(typed, knownSessions(held), what);
}

/** A row of `peers` with what picks a session out, nothing more. */
function peerRow(p: PeerInfo | LastLiveSession) {
  const { sid, state, repo, ws, branch, title } = p;
  return { sid, state, repo, ws, branch, title };
}

export const TOOLS: Record<string, Tool> = {
  send: tool({
    description:
      "Send a message to another session (sid from peers). Answers delivered, or held and why; with wait (s), also its receipt once the model saw it.",
    input: Type.Object({
      to: str(SID_ARG),
      text: str("1-3 sentences"),
      wait: Type.Optional(Type.Integer({ minimum: 1, maximum: 600 })),
    }),
    async run(a, ctx) {
      const sid = actor(ctx, "send");
      const to = await sidOf(ctx, a.to, "the recipient (to)");
      const args = { to, text: a.text };
      if (a.wait === undefined) return json(await ctx.link.call("message_send", args));
      const waitMs = a.wait * 1000;
      const { sendAndWait } = await import("../client/receipts.js");
      const out = await ctx.link.use((client) => sendAndWait(client, sid, args, waitMs));
      return json({ ...out.result, receipt: out.receipt ?? null, seen: out.seen });
    },
  }),
  reply: tool({
    description:
      "Answer a received message: its mid, and its sender's sid as to. Without to the answer goes to the person's inbox, linked to that mid.",
    input: Type.Object({
      mid: str("mid of the message answered"),
      text: Type.String(),
      to: Type.Optional(str(`the sender: ${SID_ARG}; omit when it was the person (user)`)),
    }),
    async run(a, ctx) {
      actor(ctx, "reply");
      const text = a.text;
      if (a.to === undefined) {
        // Kept in the person's inbox, linked to the message it answers (DR-0056).
        await ctx.link.call("notify_reply", { reply_to: a.mid, text });
        return json({ notified: true });
      }
      const to = await sidOf(ctx, a.to, "the recipient (to)");
      return json(await ctx.link.call("message_send", { to, text, reply_to: a.mid }));
    },
  }),
  peers: tool({
    description:
      "Sessions connected now (peers) and lately lost (last_live), with where they work.",
    input: none,
    async run(_a, ctx) {
      const data = await ctx.link.snapshot<{ peers: PeerInfo[]; last_live: LastLiveSession[] }>(
        "peers",
      );
      return json({ peers: data.peers.map(peerRow), last_live: data.last_live.map(peerRow) });
    },
  }),
  inbox: tool({
    description:
      "Take the messages held for this session. What is returned counts as delivered and leaves the inbox.",
    input: none,
    async run(_a, ctx) {
      const messages = await ctx.link.takeInbox();
      return json({
        messages: messages.map(({ mid, from, from_label, text, reply_to }) => ({
          mid,
          from,
          from_label,
          text,
          ...(reply_to === undefined ? {} : { reply_to }),
        })),
      });
    },
  }),
  notify: tool({
    description: "A short line for the person watching: done, blocked, need a decision.",
    input: Type.Object({ text: Type.String() }),
    async run(a, ctx) {
      actor(ctx, "notify");
      await ctx.link.call("notify_send", { text: a.text });
      return json({ sent: true });
    },
  }),
  kv_get: tool({
    description: "Read a key of the shared key-value store.",
    input: Type.Object({ ns: str("namespace: [a-z][a-z0-9_]*"), key: Type.String() }),
    async run(a, ctx) {
      const r = await ctx.person.call("kv_read", { ns: a.ns, key: a.key });
      return json(r.value);
    },
  }),
  kv_set: tool({
    description: "Write a key of the shared key-value store (any JSON value).",
    input: Type.Object({
      ns: str("namespace: [a-z][a-z0-9_]*"),
      key: Type.String(),
      value: Type.Unknown({ description: "any JSON value" }),
    }),
    async run(a, ctx) {
      // The person's attention grants live in KV: a session writing them as
      // the person would grant itself what only the person may (DR-0062).
      if (a.ns === ATTENTION_GRANTS_NS)
        throw contractError(
          "forbidden",
          "the attention grants are the person's to give: ccmsg attention grant <sid>",
        );
      return json(
        await ctx.person.call("kv_write", {
          ns: a.ns,
          key: a.key,
          value: a.value,
        }),
      );
    },
  }),
  reserve: tool({
    description:
      "Reserve files (globs; relative = project dir) for a while so others see you edit them. Refused, naming the holder, when taken.",
    input: Type.Object({
      globs: Type.Array(Type.String(), { minItems: 1 }),
      for: str("90s, 30m, 2h"),
      reason: Type.Optional(Type.String()),
      shared: Type.Optional(Type.Boolean()),
    }),
    async run(a, ctx) {
      const kv = await import("../client/reservations.js");
      const { derivedMeta, sessionCwd } = await import("../client/session-meta.js");
      const ms = kv.durationOf(a.for, "for");
      const reason = a.reason;
      kv.checkReason(reason, "reason");
      const cwd = sessionCwd();
      const globs = [...new Set(a.globs.map((g) => kv.resolveGlob(g, cwd)))];
      const sid = ctx.link.sid ?? null;
      const meta = sid === null ? undefined : await derivedMeta(cwd);
      const name = meta?.ws ?? meta?.branch;
      const { made } = await reservationsTurn(ctx, async (client, live) =>
        kv.takeReservations(client, live, {
          ...{ sid, globs, exclusive: a.shared !== true, ms, cwd },
          ...(reason === undefined ? {} : { reason }),
          ...(name === undefined ? {} : { name }),
          ...(meta?.repo_root === undefined ? {} : { repoRoot: meta.repo_root }),
        }),
      );
      return json({ reserved: made.map((r) => ({ glob: r.glob, expires_at: r.expires_at })) });
    },
  }),
  release: tool({
    description: "Give back your file reservations: the globs named, else all.",
    input: Type.Object({ globs: Type.Optional(Type.Array(Type.String())) }),
    async run(a, ctx) {
      const kv = await import("../client/reservations.js");
      const { sessionCwd } = await import("../client/session-meta.js");
      const cwd = sessionCwd();
      const named = a.globs;
      const globs = named === undefined ? "all" : new Set(named.map((g) => kv.resolveGlob(g, cwd)));
      const released = await reservationsTurn(ctx, (client, live) =>
        kv.dropReservations(client, live, ctx.link.sid ?? null, globs, cwd),
      );
      return json({ released: released.map((r) => r.glob) });
    },
  }),
  board_list: tool({
    description: "The work board: counts per lane and the most recent items.",
    input: Type.Object({
      lane: Type.Optional(laneSchema),
      limit: Type.Optional(Type.Integer({ minimum: 1 })),
    }),
    async run(a, ctx) {
      const lane = a.lane;
      const limit = a.limit;
      const pg = await import("../board/pg-board.js");
      return onBoard(
        ctx,
        (store) => boardListText(listBoard(store, lane, limit)),
        async (store) => {
          const window = listWindow(lane, limit ?? 20);
          return boardListText(listOf(await pg.boardSummaryPg(store, window), lane, limit ?? 20));
        },
      );
    },
  }),
  board_claim: tool({
    description:
      "Claim a work item for this session (id, or the best unassigned open one); it moves to running.",
    input: Type.Object({ id: Type.Optional(Type.String()) }),
    async run(a, ctx) {
      const owner = actor(ctx, "board_claim");
      const { claimWorkItem } = await import("../board/board.js");
      const { claimWorkItemPg } = await import("../board/pg-board.js");
      const args = { id: a.id, owner, as: "agent" };
      const said = (r: ClaimResult) =>
        r.claimed
          ? `claimed ${workItemLine(r.item)}`
          : "nothing to claim: no unassigned open items";
      return onBoard(
        ctx,
        (store) => said(claimWorkItem(store, args)),
        async (store) => said(await claimWorkItemPg(store, args)),
      );
    },
  }),
  board_move: tool({
    description: "Move a work item to a lane.",
    input: Type.Object({
      id: Type.String(),
      lane: laneSchema,
    }),
    async run(a, ctx) {
      const { moveWorkItem } = await import("../board/board.js");
      const { moveWorkItemPg } = await import("../board/pg-board.js");
      return onBoard(
        ctx,
        (store) => `moved ${workItemLine(moveWorkItem(store, a.id, a.lane).item)}`,
        async (store) => `moved ${workItemLine((await moveWorkItemPg(store, a.id, a.lane)).item)}`,
      );
    },
  }),
  attention: tool({
    description:
      "Others' pending prompts, if the person let you; item (id@instance) + allow decides one.",
    input: Type.Object({
      item: Type.Optional(Type.String()),
      allow: Type.Optional(Type.Boolean()),
      why: Type.Optional(Type.String()),
    }),
    async run(a, ctx) {
      const me = actor(ctx, "attention");
      const page = await ctx.link.call("attention_read", { pending: true, scope: "mesh" });
      // Its own prompts are the person's alone to answer: not offered.
      const r = { ...page, items: page.items.filter((i) => i.sid !== me) };
      if (a.item === undefined)
        return json({
          items: r.items.map((i) => ({
            item: `${i.id}@${i.instance}`,
            session: i.sid_label ?? i.sid,
            tool: i.tool,
            input: i.input,
            ...(i.questions === undefined ? {} : { questions: i.questions }),
          })),
          ...(r.unread === undefined ? {} : { unread: r.unread }),
        });
      const found = r.items.find((i) => `${i.id}@${i.instance}` === a.item);
      if (found === undefined)
        throw contractError("not_found", `no pending item ${a.item} (call attention to list them)`);
      if (a.allow === undefined)
        throw contractError("invalid_args", "allow: true to allow, false to deny");
      const args = {
        // The envelope field that carries it to the item's instance (contract §8).
        to_instance: found.instance,
        sid: found.sid,
        id: found.id,
        behavior: a.allow ? ("allow" as const) : ("deny" as const),
        via: "mcp",
        ...(a.why === undefined || a.allow ? {} : { message: a.why }),
      };
      const d = await ctx.link.call("attention_decide", args as AttentionDecideArgs);
      return json({
        outcome: d.outcome,
        end: d.item.end,
        ...(d.reason ? { reason: d.reason } : {}),
      });
    },
  }),
  status: tool({
    description: "Readiness summary: active sessions, failed runs, blocked work.",
    input: none,
    async run(_a, ctx) {
      const { statusAt, statusText } = await import("../board/status.js");
      return statusText(statusAt(stateFiles(resolveStateDir(ctx.flags["state-dir"])).database, 5));
    },
  }),
  hud: tool({
    description: "This session's HUD: context, git, checks, queues, what to do next.",
    input: none,
    async run(_a, ctx) {
      const { hudReport } = await import("../hud/report.js");
      return (await hudReport(resolveStateDir(ctx.flags["state-dir"]), ctx.flags.sid)).text();
    },
  }),
};
