import { MAX_JSON_DEPTH } from "./constants.js";

/**
 * Whether `value` nests more than `max` arrays/objects inside each other.
 * Iterative on purpose: a recursive check would itself overflow the stack on
 * the values it exists to refuse. Stops at the first branch that is too deep.
 */
export function exceedsJsonDepth(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
  if (typeof value !== "object" || value === null) return false;
  const stack: [object, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === "object" && child !== null) stack.push([child, depth + 1]);
    }
  }
  return false;
}

/** The refusal's words, the same for every place that applies the limit. */
export function tooDeep(what: string): string {
  return `${what} nests deeper than ${MAX_JSON_DEPTH} levels of arrays and objects`;
}
