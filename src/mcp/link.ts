import { inWords } from "../client/arg-words.js";
import type { ArgsOf, Client } from "../client/client.js";
import { connectInstance, greet } from "../client/connect.js";
import type { Flags } from "../client/flags.js";
import { takeInbox, topicSnapshot } from "../client/snapshots.js";
import type { OpName } from "../contract/attributes.js";
import { ContractError } from "../contract/errors.js";
import type { InboxMessage } from "../contract/messaging.js";
import type { OpResult } from "../contract/schemas.js";
import { ShownLedger } from "../state/shown-ledger.js";

/**
 * The MCP server's one connection to the instance, greeted as the session the
 * server speaks for (or as the person when none is known). It is opened on
 * the first tool call that needs it — starting the instance like every other
 * command — and opened again on the next call after the instance restarted or
 * went away. While it is open the session counts as connected, as the harness
 * that started the server is alive. Reads of a topic take turns, so two tool
 * calls never hold the same subscription at once.
 */
export class SessionLink {
  private client: Promise<Client> | undefined;
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly flags: Flags,
    readonly sid: string | undefined,
  ) {}

  /** Call an op as the session; a refusal throws its ContractError, a bad
   * argument named in words (arg-words.ts). */
  async call<Op extends OpName>(op: Op, args: ArgsOf<Op>[0]): Promise<OpResult<Op>> {
    const client = await this.connection();
    return client.call(op, ...([args] as ArgsOf<Op>)).catch((error: unknown) => {
      throw inWords(op, error);
    });
  }

  /** A topic's current value (subscribe, take the snapshot, unsubscribe). */
  snapshot<T>(topic: string): Promise<T> {
    return this.inTurn(async () => {
      const client = await this.connection();
      const data = await topicSnapshot<T>(client, topic);
      await client.call("topic_unsubscribe", { topic });
      return data;
    });
  }

  /** Run `fn` on the connection, in turn with the topic reads. */
  use<T>(fn: (client: Client) => Promise<T>): Promise<T> {
    return this.inTurn(async () => fn(await this.connection()));
  }

  /** Take what is held for the session: what is returned has left the inbox. */
  async takeInbox(): Promise<InboxMessage[]> {
    if (this.sid === undefined) throw needsSession("inbox");
    const ledger = ShownLedger.of(this.flags, this.sid);
    return this.inTurn(async () => takeInbox(await this.connection(), ledger));
  }

  close(): void {
    void this.client?.then(
      (c) => c.close(),
      () => {},
    );
    this.client = undefined;
  }

  private inTurn<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn, fn);
    this.turn = run.catch(() => {});
    return run;
  }

  private connection(): Promise<Client> {
    if (this.client !== undefined) return this.client;
    const opening = (async () => {
      const client = await connectInstance(this.flags);
      client.onClose(() => {
        if (this.client === opening) this.client = undefined;
      });
      try {
        await greet(client, this.sid);
      } catch (error) {
        client.close();
        throw error;
      }
      return client;
    })();
    this.client = opening;
    opening.catch(() => {
      if (this.client === opening) this.client = undefined;
    });
    return opening;
  }
}

/** What a tool that acts as the session says when the server knows none. */
export function needsSession(tool: string): ContractError {
  return new ContractError(
    "invalid_args",
    `${tool} acts as a session, and this MCP server knows none: start it inside a session (CLAUDE_CODE_SESSION_ID, CODEX_THREAD_ID) or with --sid`,
  );
}
