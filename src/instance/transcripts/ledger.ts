import { SID_PATTERN } from "../../contract/identifiers.js";
import type {
  DumpIdEntry,
  DumpIdKind,
  DumpIds,
  TranscriptItem,
} from "../../contract/transcripts.js";

// The id ledger of a typed read or a dump (contract §10.6): the ids the items
// mention — agents started, background tasks, pending calls, messages and the
// sessions they went to or came from, crons — so a client can pick the next
// subject without opening the file. Relative to the subject: an agent's
// ledger lists the agents it started, never itself; a session's never lists
// its own sid.

const sidRe = new RegExp(SID_PATTERN);
/** Labels are for recognising an entry, not for reading: cut to this. */
const LABEL_MAX = 120;

type Fields = Record<string, unknown>;

export class Ledger {
  private readonly entries = new Map<string, DumpIdEntry>();
  /** What a call was about, by tool_use_id, to label the id its result names. */
  private readonly labels = new Map<string, string>();

  constructor(private readonly subject: { sid: string; agentId?: string }) {}

  add(item: TranscriptItem): void {
    const f = item as unknown as Fields;
    const type = item.type;
    const toolUseId = typeof f.tool_use_id === "string" ? f.tool_use_id : undefined;
    if (f.role === "use" && toolUseId !== undefined) {
      const label = text(f.description) ?? text(f.name) ?? text(f.skill) ?? text(f.cron);
      if (label !== undefined) this.labels.set(toolUseId, label);
      if (f.result_item === undefined)
        this.note("tool_use", toolUseId, { label: type.slice(5), status: "pending" });
      if (type === "tool:TaskStop") this.note("task", f.task_id, { status: "stopped" });
      return;
    }
    const label = toolUseId === undefined ? undefined : this.labels.get(toolUseId);
    switch (type) {
      case "tool:Agent":
      case "tool:Skill":
        this.note("agent", f.agent_id, { label, status: f.status });
        return;
      case "message:sub:in":
        this.note("agent", f.agent_id, { status: f.status, duration_ms: f.duration_ms });
        return;
      case "tool:Monitor":
        this.note("task", f.task_id, { label });
        return;
      case "system:task":
        this.note("task", f.task_id, { label: f.text, status: f.event });
        return;
      case "tool:CronCreate":
        this.note("cron", f.cron_id, { label });
        return;
      case "tool:SendMessage":
        this.note("msg", f.msg_id, { label });
        return;
      case "message:session:in":
        this.note("msg", f.msg_id, { label: f.from });
        this.noteSid(f.from);
        return;
      case "message:session:out":
        this.note("msg", f.msg_id, { label: f.to });
        this.note("msg", f.reply_to, {});
        this.noteSid(f.to);
        return;
    }
  }

  private noteSid(value: unknown): void {
    if (typeof value === "string" && sidRe.test(value)) this.note("sid", value, {});
  }

  private note(kind: DumpIdKind, id: unknown, more: Fields): void {
    if (typeof id !== "string" || id === "") return;
    if (kind === "agent" && id === this.subject.agentId) return;
    if (kind === "sid" && id === this.subject.sid) return;
    const key = `${kind}\u0000${id}`;
    const entry = this.entries.get(key) ?? { kind, id };
    const label = text(more.label);
    if (label !== undefined) entry.label = label;
    if (typeof more.status === "string") entry.status = more.status;
    if (typeof more.duration_ms === "number") entry.duration_ms = more.duration_ms;
    this.entries.set(key, entry);
  }

  ids(): DumpIds {
    return [...this.entries.values()];
  }

  get size(): number {
    return this.entries.size;
  }
}

function text(value: unknown): string | undefined {
  if (typeof value !== "string" || value === "") return undefined;
  return value.length > LABEL_MAX ? `${value.slice(0, LABEL_MAX - 1)}…` : value;
}
