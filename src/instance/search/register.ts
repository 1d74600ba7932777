import type { Contribution } from "../dispatch.js";
import { SearchEngine, type SearchEngineOptions } from "./engine.js";

/** Search across sessions (DR-0037): its own file and threads. It has no
 * ops: `/api/search` is served over HTTP (http/listener.ts), and it hears of
 * messages as messaging's observer. */
export function registerSearch(deps: SearchEngineOptions): Contribution & { search: SearchEngine } {
  return { search: new SearchEngine(deps), handlers: {} };
}
