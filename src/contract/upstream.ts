/**
 * The marker for types whose vocabulary an upstream owns (contract §1.11):
 * `claude` (the Claude Code CLI) or `llm-gateway`. Their open-set string fields
 * may hold values the contract does not list. The conventions test skips the
 * snake_case rule below a marked type, because the names there are not ours.
 */
export type Upstream = "claude" | "llm-gateway";

export interface UpstreamMarker {
  upstream: Upstream;
  description: string;
}

export function upstream(owner: Upstream, what: string): UpstreamMarker {
  return { upstream: owner, description: `upstream ${owner}: ${what}` };
}
