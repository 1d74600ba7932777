import type { TSchema } from "@sinclair/typebox";
import {
  CONNECTION_EVENTS,
  FailureReply,
  OP_NAMES,
  OP_SCHEMAS,
  TOPIC_KINDS,
  TOPIC_SCHEMAS,
} from "../../src/contract/index.js";

/** One property reachable from a wire schema. */
export interface WalkedProperty {
  /** Where it sits, e.g. `message_send response/candidates/[]/sid`. */
  path: string;
  name: string;
  schema: TSchema;
  /** Below a type whose vocabulary an upstream owns. */
  underUpstream: boolean;
  /** Below an ECC-owned shape (camelCase by ECC's convention). */
  underEcc: boolean;
}

/** Every schema that goes on the wire, by a readable name. */
export function wireSchemas(): [string, TSchema][] {
  const out: [string, TSchema][] = [["failure reply", FailureReply]];
  for (const op of OP_NAMES) {
    out.push(
      [`${op} request`, OP_SCHEMAS[op].request],
      [`${op} response`, OP_SCHEMAS[op].response],
    );
  }
  for (const kind of TOPIC_KINDS) out.push([`${kind} frame`, TOPIC_SCHEMAS[kind]]);
  for (const [ev, s] of Object.entries(CONNECTION_EVENTS)) out.push([`${ev} event`, s]);
  return out;
}

/** Walk every property of a schema, through objects, arrays, unions,
 * intersections, records and recursive types (each `$id` visited once). */
export function walkProperties(root: string, schema: TSchema): WalkedProperty[] {
  const out: WalkedProperty[] = [];
  const ids = new Map<string, TSchema>();
  const seen = new Set<TSchema>();
  const visit = (s: TSchema, path: string, upstream: boolean, ecc: boolean) => {
    if (s === undefined || seen.has(s)) return;
    seen.add(s);
    if (typeof s.$id === "string") ids.set(s.$id, s);
    const under = upstream || typeof (s as { upstream?: unknown }).upstream === "string";
    const inEcc = ecc || (s as { ecc?: unknown }).ecc === true;
    if (typeof s.$ref === "string") {
      const target = ids.get(s.$ref);
      if (target) visit(target, path, under, inEcc);
      return;
    }
    if (s.properties) {
      for (const [name, p] of Object.entries(s.properties as Record<string, TSchema>)) {
        out.push({
          path: `${path}/${name}`,
          name,
          schema: p,
          underUpstream: under,
          underEcc: inEcc,
        });
        visit(p, `${path}/${name}`, under, inEcc);
      }
    }
    if (s.items && !Array.isArray(s.items)) visit(s.items as TSchema, `${path}/[]`, under, inEcc);
    for (const key of ["anyOf", "allOf", "oneOf"] as const) {
      for (const branch of (s[key] as TSchema[] | undefined) ?? [])
        visit(branch, path, under, inEcc);
    }
    for (const value of Object.values((s.patternProperties as Record<string, TSchema>) ?? {})) {
      visit(value, `${path}/{}`, under, inEcc);
    }
    if (s.additionalProperties && typeof s.additionalProperties === "object") {
      visit(s.additionalProperties as TSchema, `${path}/{}`, under, inEcc);
    }
  };
  visit(schema, root, false, false);
  return out;
}

/** Whether a schema accepts only integers ≥ 0 (a Timestamp or a count),
 * looking through `Optional` and single-branch wrappers. */
export function isNonNegativeInteger(s: TSchema): boolean {
  return s.type === "integer" && s.minimum === 0;
}
