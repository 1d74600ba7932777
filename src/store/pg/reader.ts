import type { Client } from "pg";
import type { KvEntry } from "../../contract/kv.js";
import type { CheckRun } from "../check-runs.js";
import { PgWorkItems } from "./board-store.js";
import { PgKvTable } from "./kv-store.js";

/** A reader gives up on the team store after this (the HUD answers within
 * its own budget; what was not read shows as unknown). */
const READ_TIMEOUT_MS = 1500;

/**
 * Read-only access to the team store (DR-0046) for commands that only look
 * — the HUD's `checks.local` and reservations. One connection, opened at
 * the first read; no migration is run, and a store that cannot be reached
 * (or predates a table) reads as unknown rather than failing the command.
 */
export class TeamReader {
  private client: Promise<Client> | undefined;

  constructor(private readonly url: string) {}

  /** The latest run per check of a repository; undefined when unreadable. */
  async checkRuns(repoRoot: string): Promise<CheckRun[] | undefined> {
    return this.read(async (c) => new PgWorkItems(c).latestCheckRuns(repoRoot));
  }

  /** The live entries of a KV namespace; undefined when unreadable. */
  async kvEntries(ns: string): Promise<KvEntry[] | undefined> {
    return this.read(async (c) =>
      (await new PgKvTable(c).live(ns)).map((r) => ({
        key: r.key,
        value: JSON.parse(r.json!),
        updated_at: r.updated_at,
      })),
    );
  }

  close(): void {
    this.client?.then((c) => c.end()).catch(() => {});
  }

  private async read<T>(fn: (c: Client) => Promise<T>): Promise<T | undefined> {
    try {
      this.client ??= this.connect();
      return await fn(await this.client);
    } catch {
      return undefined;
    }
  }

  private async connect(): Promise<Client> {
    const { default: pg } = await import("pg");
    const client = new pg.Client({
      connectionString: this.url,
      application_name: "ccmsg",
      connectionTimeoutMillis: READ_TIMEOUT_MS,
      query_timeout: READ_TIMEOUT_MS,
    });
    client.on("error", () => {});
    await client.connect();
    return client;
  }
}
