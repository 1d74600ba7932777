import type { FastifyInstance } from "fastify";
import { ContractError } from "../../contract/errors.js";
import { parseSince, type SearchArgs } from "../../store/search-query.js";
import { sendJson } from "../http/json-reply.js";
import type { SearchEngine } from "./engine.js";

/**
 * Search across sessions over HTTP (this implementation's extension, for the
 * web console; DR-0037): `GET /api/search?q=…[&sid=…][&since=…][&type=…][&limit=n]`
 * answers `{ ok: true, hits, more, indexing }`, the same as `ccmsg search --json`.
 * A query FTS5 cannot read, or a bad filter, is 400 with `code: "invalid_args"`.
 * Behind the Host, Origin and owner checks of the gate (gate.ts), like every route.
 */
export interface SearchHttpDeps {
  search: Pick<SearchEngine, "search">;
  now(): number;
}

export async function searchPlugin(app: FastifyInstance, deps: SearchHttpDeps) {
  await app.register(
    (api, _opts, done) => {
      api.get("/", async (req, reply) => {
        const query = req.query as Record<string, string | string[] | undefined>;
        try {
          const result = await deps.search.search(searchArgs(query, deps.now()));
          return sendJson(reply, 200, { ok: true, ...result });
        } catch (error) {
          if (!(error instanceof ContractError)) throw error;
          const status = error.code === "invalid_args" ? 400 : 500;
          return sendJson(reply, status, { ok: false, code: error.code, error: error.message });
        }
      });
      done();
    },
    { prefix: "/api/search" },
  );
}

/** The query string as search arguments (each parameter once). */
function searchArgs(query: Record<string, string | string[] | undefined>, now: number): SearchArgs {
  const one = (name: string): string | undefined => {
    const v = query[name];
    if (Array.isArray(v)) throw new ContractError("invalid_args", `${name}: give it once`);
    return v === undefined || v === "" ? undefined : v;
  };
  const args: SearchArgs = { q: one("q") ?? "" };
  const sid = one("sid");
  const since = one("since");
  const type = one("type");
  const limit = one("limit");
  if (sid !== undefined) args.sid = sid;
  if (since !== undefined) args.since = parseSince(since, now);
  if (type !== undefined) args.type = type;
  if (limit !== undefined) {
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 1)
      throw new ContractError("invalid_args", "limit: a whole number ≥ 1");
    args.limit = n;
  }
  return args;
}
