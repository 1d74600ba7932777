import type { Static, TSchema } from "@sinclair/typebox";
import * as agents from "./agents.js";
import * as attention from "./attention.js";
import type { OpName } from "./attributes.js";
import * as auth from "./auth.js";
import * as common from "./connect.js";
import { WorkItemsData } from "./ecc/board.js";
import { topicFrame } from "./envelope.js";
import * as files from "./files.js";
import * as kv from "./kv.js";
import * as launcher from "./launcher.js";
import * as llm from "./llm.js";
import * as messaging from "./messaging.js";
import * as notifications from "./notifications.js";
import * as peers from "./peers.js";
import * as receipts from "./receipts.js";
import * as sandbox from "./sandbox.js";
import * as sessionControl from "./session-control.js";
import * as sessionStatus from "./session-status.js";
import { type TopicKind, topicNamePattern } from "./topics.js";
import * as transcripts from "./transcripts.js";
import * as translate from "./translate.js";

export interface OpSchemas {
  readonly request: TSchema;
  readonly response: TSchema;
}

/** Request and success-reply schema of every op. Checked against `OpName`, so
 * a row of the attribute table without schemas fails to typecheck, and each
 * op keeps its own schema types (`OpRequest`, `OpResult`). */
export const OP_SCHEMAS = {
  hello: { request: common.HelloRequest, response: common.HelloResponse },
  instance_ping: { request: common.InstancePingRequest, response: common.InstancePingResponse },
  instance_shutdown: {
    request: common.InstanceShutdownRequest,
    response: common.InstanceShutdownResponse,
  },
  session_stopping: {
    request: common.SessionStoppingRequest,
    response: common.SessionStoppingResponse,
  },
  topic_subscribe: {
    request: common.TopicSubscribeRequest,
    response: common.TopicSubscribeResponse,
  },
  topic_unsubscribe: {
    request: common.TopicUnsubscribeRequest,
    response: common.TopicUnsubscribeResponse,
  },
  auth_challenge: { request: auth.AuthChallengeRequest, response: auth.AuthChallengeResponse },
  auth_register: { request: auth.AuthRegisterRequest, response: auth.AuthRegisterResponse },
  auth_assert: { request: auth.AuthAssertRequest, response: auth.AuthAssertResponse },
  auth_refresh_token: {
    request: auth.AuthRefreshTokenRequest,
    response: auth.AuthRefreshTokenResponse,
  },
  auth_refresh: { request: auth.AuthRefreshRequest, response: auth.AuthRefreshResponse },
  auth_resolve: { request: auth.AuthResolveRequest, response: auth.AuthResolveResponse },
  auth_rotate: { request: auth.AuthRotateRequest, response: auth.AuthRotateResponse },

  message_send: {
    request: messaging.MessageSendRequest,
    response: messaging.MessageSendResponse,
  },
  say_post: { request: messaging.SayPostRequest, response: messaging.SayPostResponse },
  say_mark_read: {
    request: messaging.SayMarkReadRequest,
    response: messaging.SayMarkReadResponse,
  },
  notify_send: { request: messaging.NotifySendRequest, response: messaging.NotifySendResponse },
  receipts_read: {
    request: receipts.ReceiptsReadRequest,
    response: receipts.ReceiptsReadResponse,
  },
  notify_reply: {
    request: notifications.NotifyReplyRequest,
    response: notifications.NotifyReplyResponse,
  },
  notifications_read: {
    request: notifications.NotificationsReadRequest,
    response: notifications.NotificationsReadResponse,
  },
  notifications_mark_read: {
    request: notifications.NotificationsMarkReadRequest,
    response: notifications.NotificationsMarkReadResponse,
  },
  attention_read: {
    request: attention.AttentionReadRequest,
    response: attention.AttentionReadResponse,
  },
  attention_decide: {
    request: attention.AttentionDecideRequest,
    response: attention.AttentionDecideResponse,
  },
  attention_grant: {
    request: attention.AttentionGrantRequest,
    response: attention.AttentionGrantResponse,
  },
  attention_revoke: {
    request: attention.AttentionRevokeRequest,
    response: attention.AttentionRevokeResponse,
  },
  attention_grants: {
    request: attention.AttentionGrantsRequest,
    response: attention.AttentionGrantsResponse,
  },

  session_kill: {
    request: sessionControl.SessionKillRequest,
    response: sessionControl.SessionKillResponse,
  },
  session_rename: {
    request: sessionControl.SessionRenameRequest,
    response: sessionControl.SessionRenameResponse,
  },
  session_env_read: {
    request: sessionControl.SessionEnvReadRequest,
    response: sessionControl.SessionEnvReadResponse,
  },
  session_search: {
    request: sessionControl.SessionSearchRequest,
    response: sessionControl.SessionSearchResponse,
  },
  session_dump_write: {
    request: transcripts.SessionDumpWriteRequest,
    response: transcripts.SessionDumpWriteResponse,
  },
  dump_presets_read: {
    request: transcripts.DumpPresetsReadRequest,
    response: transcripts.DumpPresetsReadResponse,
  },
  transcript_read: {
    request: transcripts.TranscriptReadRequest,
    response: transcripts.TranscriptReadResponse,
  },
  transcript_items_read: {
    request: transcripts.TranscriptItemsReadRequest,
    response: transcripts.TranscriptItemsReadResponse,
  },
  session_fork_origin: {
    request: sessionControl.SessionForkOriginRequest,
    response: sessionControl.SessionForkOriginResponse,
  },
  session_last_live_remove: {
    request: sessionControl.SessionLastLiveRemoveRequest,
    response: sessionControl.SessionLastLiveRemoveResponse,
  },
  dir_list: { request: files.DirListRequest, response: files.DirListResponse },
  file_read: { request: files.FileReadRequest, response: files.FileReadResponse },
  file_write: { request: files.FileWriteRequest, response: files.FileWriteResponse },
  file_create: { request: files.FileCreateRequest, response: files.FileCreateResponse },
  file_edit: { request: files.FileEditRequest, response: files.FileEditResponse },
  file_delete: { request: files.FileDeleteRequest, response: files.FileDeleteResponse },
  file_find: { request: files.FileFindRequest, response: files.FileFindResponse },
  file_stat_batch: { request: files.FileStatBatchRequest, response: files.FileStatBatchResponse },
  dir_tree: { request: files.DirTreeRequest, response: files.DirTreeResponse },
  launcher_config_read: {
    request: launcher.LauncherConfigReadRequest,
    response: launcher.LauncherConfigReadResponse,
  },
  launcher_run: { request: launcher.LauncherRunRequest, response: launcher.LauncherRunResponse },
  sandbox_grant: { request: sandbox.SandboxGrantRequest, response: sandbox.SandboxGrantResponse },
  sandbox_revoke: {
    request: sandbox.SandboxRevokeRequest,
    response: sandbox.SandboxRevokeResponse,
  },
  translate_run: {
    request: translate.TranslateRunRequest,
    response: translate.TranslateRunResponse,
  },
  llm_usage_read: { request: llm.LlmUsageReadRequest, response: llm.LlmUsageReadResponse },
  llm_stats_read: { request: llm.LlmStatsReadRequest, response: llm.LlmStatsReadResponse },
  kv_read: { request: kv.KvReadRequest, response: kv.KvReadResponse },
  kv_write: { request: kv.KvWriteRequest, response: kv.KvWriteResponse },
  kv_delete: { request: kv.KvDeleteRequest, response: kv.KvDeleteResponse },
} as const satisfies Record<OpName, OpSchemas>;

/** `Omit` over each member of a union (the built-in keeps common keys only). */
type OmitEach<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** A request frame of `op` as it arrives: envelope and arguments, flat. */
export type OpRequest<Op extends OpName> = Static<(typeof OP_SCHEMAS)[Op]["request"]>;
/** The arguments of `op`: its request without the envelope's fields. */
export type OpArgs<Op extends OpName> = OmitEach<
  OpRequest<Op>,
  "op" | "request_id" | "to_instance" | "from_instance" | "hops" | "caller"
>;
/** The result of `op`: its success reply without `ok` and `request_id`. */
export type OpResult<Op extends OpName> = OmitEach<
  Static<(typeof OP_SCHEMAS)[Op]["response"]>,
  "ok" | "request_id"
>;

/** The frame schema of every topic kind. */
export const TOPIC_SCHEMAS: Record<TopicKind, TSchema> = {
  inbox: messaging.InboxFrame,
  notify: messaging.NotifyFrame,
  peers: peers.PeersFrame,
  agents: agents.AgentsFrame,
  session_errors: sessionStatus.SessionErrorsFrame,
  llm_requests: llm.LlmRequestsFrame,
  llm_status: llm.LlmStatusFrame,
  session_status: sessionStatus.SessionStatusFrame,
  transcript: transcripts.TranscriptFrame,
  transcript_items: transcripts.TranscriptItemsFrame,
  kv: kv.KvFrame,
  auth_records: auth.AuthRecordsFrame,
  work_items: topicFrame(topicNamePattern("work_items"), WorkItemsData),
  receipts: receipts.ReceiptsFrame,
  attention: attention.AttentionFrame,
};
