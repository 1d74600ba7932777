import type { WorkItemInput } from "../contract/ecc/board.js";
import { ContractError } from "../contract/errors.js";

/** A work item's fields from `ccmsg board add|update` flags. */
export function input(
  values: Record<string, string | boolean | undefined>,
  id: string | undefined,
): WorkItemInput {
  const s = (k: string) => values[k] as string | undefined;
  const out: WorkItemInput = {};
  if (id !== undefined) out.id = id;
  const map: [keyof WorkItemInput, string][] = [
    ["title", "title"],
    ["status", "status"],
    ["priority", "priority"],
    ["owner", "owner"],
    ["url", "url"],
    ["source", "source"],
    ["sourceId", "source-id"],
    ["repoRoot", "repo-root"],
    ["sessionId", "session-id"],
  ];
  for (const [key, flag] of map)
    if (s(flag) !== undefined) (out as Record<string, unknown>)[key] = s(flag);
  if (s("metadata-json") !== undefined) {
    try {
      out.metadata = JSON.parse(s("metadata-json")!);
    } catch {
      throw new ContractError("invalid_args", "--metadata-json is not valid JSON");
    }
  }
  return out;
}
