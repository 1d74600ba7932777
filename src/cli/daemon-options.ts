import { ContractError } from "../contract/errors.js";
import { isPostgresUrl } from "../store/pg/url.js";

// What `ccmsg daemon` and the instance's own entry (daemon-run.ts) both read.

export const USAGE =
  "ccmsg daemon run|start|stop|status|restart [--state-dir d] [--http host:port|off] [--recover] [--store postgres://…]";

export const HTTP_OPTION = {
  http: { type: "string" },
  "test-hooks": { type: "boolean" },
  "read-only": { type: "boolean" },
  recover: { type: "boolean" },
  store: { type: "string" },
} as const;

/** `--store`: only a PostgreSQL URL names another store (DR-0046). */
export function storeArg(store: string | undefined): string | undefined {
  if (store !== undefined && !isPostgresUrl(store))
    throw new ContractError("invalid_args", "--store must be a postgres://… URL");
  return store;
}
