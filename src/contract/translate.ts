import { type Static, Type } from "@sinclair/typebox";
import { request, response } from "./envelope.js";

// Translation (contract §4.3.5) through a helper the instance is configured
// with. Its absence is `capability_unavailable`; its failure on a whole call is
// `translate_helper_failed`.

// --- translate_run ---

export const TranslateRunArgs = Type.Object({
  /** An empty batch is answered with an empty batch; it does not tell whether
   * the helper works. */
  texts: Type.Array(Type.String()),
});
export type TranslateRunArgs = Static<typeof TranslateRunArgs>;

/** The outcome of one text. Per item, so one text the helper chokes on does
 * not cost the rest of the batch. */
export const TranslateResult = Type.Union([
  Type.Object({ ok: Type.Literal(true), text: Type.String() }),
  Type.Object({ ok: Type.Literal(false), error: Type.String() }),
]);
export type TranslateResult = Static<typeof TranslateResult>;

export const TranslateRunResult = Type.Object({
  /** One per input text, same order. */
  results: Type.Array(TranslateResult),
});
export type TranslateRunResult = Static<typeof TranslateRunResult>;
export const TranslateRunRequest = request("translate_run", TranslateRunArgs);
export const TranslateRunResponse = response("translate_run", TranslateRunResult);
