import { type Static, Type } from "@sinclair/typebox";
import { Sid, Timestamp } from "../contract/identifiers.js";

// One item of the webhook route's JSON array (`POST …/webhook/<source>`,
// contract §1.1): what an LLM gateway saw of one request to the model. The
// contract leaves the item to the instance (DR-0043); `ccmsg gateway` sends
// these, and any other gateway may. The names follow the Messages API and the
// contract's `LlmRequestInfo`, so most fields pass straight through.

const Count = Type.Integer({ minimum: 0 });

/** The Messages API's `usage` block, summed over the response. */
export const LlmEventUsage = Type.Object(
  {
    input_tokens: Type.Optional(Count),
    output_tokens: Type.Optional(Count),
    cache_creation_input_tokens: Type.Optional(Count),
    cache_read_input_tokens: Type.Optional(Count),
  },
  { additionalProperties: false },
);
export type LlmEventUsage = Static<typeof LlmEventUsage>;

export const LlmEvent = Type.Object(
  {
    /** When the upstream response headers arrived (Unix ms). */
    received_at: Timestamp,
    /** The harness session that made the request; without it the item feeds
     * nothing per session. */
    sid: Type.Optional(Sid),
    /** The conversation series (a cache prefix). */
    prefix: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    /** Whose turn issued it, when the gateway knows (`main` = the session's own). */
    origin: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    /** A name for the credential used — never the secret itself. */
    credential: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    ns: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    /** The upstream HTTP status. */
    status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
    /** The prompt-cache lifetime the request asked for. */
    cache_ttl_secs: Type.Optional(Count),
    cache_expires_at: Type.Optional(Timestamp),
    /** When the response ended; absent while it streams. */
    completed_at: Type.Optional(Timestamp),
    /** Present once the response told it (at its end for a stream). */
    usage: Type.Optional(LlmEventUsage),
    /** The provider's error type (`overloaded_error`, …) when it failed. */
    error: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    /** The service asked (the upstream's host), for `llm_status`. */
    upstream: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    /** The response's `anthropic-ratelimit-*` headers, the prefix taken off
     * (`requests-remaining`, `unified-5h-utilization`, …), for `llm_usage_read`. */
    ratelimit: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 256 }), {
        maxProperties: 64,
      }),
    ),
  },
  { additionalProperties: false },
);
export type LlmEvent = Static<typeof LlmEvent>;
