import { Kind, type SchemaOptions, type TSchema, TypeRegistry } from "@sinclair/typebox";

/**
 * Strings whose length limits count Unicode code points.
 *
 * JSON Schema's `maxLength` counts code points, while TypeBox's compiled checks
 * count UTF-16 code units, so an emoji would be "two characters" to one and
 * "one" to the other (contract §0.3). We pick the JSON Schema rule everywhere a
 * limit exists: a title a browser validator accepts is one the instance accepts.
 * The schema still reads as a plain `{ type: "string", maxLength }` to any JSON
 * Schema tool; only TypeBox dispatches on the custom kind to count correctly.
 *
 * Why a custom kind rather than a format: a format cannot carry the limit.
 */
export interface TText extends TSchema {
  [Kind]: "CodePointString";
  static: string;
  type: "string";
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

export interface TextOptions extends SchemaOptions {
  minLength?: number;
  maxLength?: number;
  pattern?: string;
}

const patterns = new Map<string, RegExp>();

function codePoints(value: string, stopAfter: number): number {
  let n = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < value.length) {
      const d = value.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    if (++n > stopAfter) return n;
  }
  return n;
}

TypeRegistry.Set<TText>("CodePointString", (schema, value) => {
  if (typeof value !== "string") return false;
  // Cheap bounds first: UTF-16 length is an upper bound on code points and at
  // most twice them, so most values never need the counting loop — and no
  // pattern runs over a value already known to be too long.
  if (schema.maxLength !== undefined && value.length > schema.maxLength) {
    if (value.length > schema.maxLength * 2) return false;
    if (codePoints(value, schema.maxLength) > schema.maxLength) return false;
  }
  if (schema.minLength !== undefined && value.length < schema.minLength) return false;
  if (schema.minLength !== undefined && value.length < schema.minLength * 2) {
    if (codePoints(value, schema.minLength) < schema.minLength) return false;
  }
  if (schema.pattern !== undefined) {
    let re = patterns.get(schema.pattern);
    if (re === undefined) {
      re = new RegExp(schema.pattern, "u");
      patterns.set(schema.pattern, re);
    }
    if (!re.test(value)) return false;
  }
  return true;
});

/** A string whose `minLength` / `maxLength` count code points (see above). */
export function Text(options: TextOptions = {}): TText {
  return { ...options, [Kind]: "CodePointString", type: "string" } as TText;
}

/** Length in code points, for callers that must apply the same rule. */
export function codePointLength(value: string): number {
  return codePoints(value, Number.POSITIVE_INFINITY);
}
