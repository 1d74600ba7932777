import { renderDirectDelivery } from "../contract/direct-delivery.js";
import type { InboxMessage } from "../contract/messaging.js";

// What ccmsg's hooks hand a harness (harness spec §2.7): messages in the
// contract's direct-delivery wording, within the budgets the harness allows.
// Pure, so the hooks and their tests share one rendering.

/** Sync hooks (greeting, inbox, goodbye) get this many seconds. */
export const SYNC_HOOK_TIMEOUT_S = 5;
/** The waiter's hook timeout. An idle session is wakeable only while a waiter
 * lives, and only a hook event starts a new one, so `ccmsg wait --hook` runs
 * until just before this many seconds and then exits 0. */
export const WAITER_HOOK_TIMEOUT_S = 86_400;
/** A PermissionRequest hook is held while the person may answer from
 * elsewhere (DR-0062): its timeout is the instance's hold plus this margin,
 * so the instance, not the harness, ends the hold and says so in the queue. */
export const PERMISSION_HOOK_MARGIN_S = 30;
export const permissionHookTimeoutS = (holdS: number) => holdS + PERMISSION_HOOK_MARGIN_S;
/** Claude Code's cap on `hookSpecificOutput.additionalContext`. */
export const ADDITIONAL_CONTEXT_MAX_CHARS = 10_000;

/** One message as the model reads it. */
export function renderMessage(m: InboxMessage): string {
  const d = { mid: m.mid, from: m.from, from_label: m.from_label, text: m.text };
  return renderDirectDelivery(m.reply_to === undefined ? d : { ...d, reply_to: m.reply_to });
}

/**
 * The oldest messages whose rendering fits `max` characters with a closing
 * note about the rest, and that text. With `atLeastOne` the oldest is taken
 * even when it alone is longer (a wake-up has no cap of its own; one message
 * must always get through). The note says what stays held and why.
 */
export function fitMessages(
  messages: InboxMessage[],
  max: number,
  atLeastOne = false,
): { text: string; included: InboxMessage[] } {
  const blocks: string[] = [];
  let used = 0;
  let i = 0;
  for (; i < messages.length; i++) {
    const block = renderMessage(messages[i]!);
    const rest = messages.length - i - 1;
    // Room for this block, the separator, and a note if some stay behind.
    const need =
      block.length + (blocks.length > 0 ? 2 : 0) + (rest > 0 ? heldNote(rest).length + 2 : 0);
    if (used + need > max && !(atLeastOne && i === 0)) break;
    blocks.push(block);
    used += block.length + (blocks.length > 1 ? 2 : 0);
  }
  const left = messages.length - i;
  if (left > 0) blocks.push(blocks.length === 0 ? tooLongNote(messages[0]!, left) : heldNote(left));
  return { text: blocks.join("\n\n"), included: messages.slice(0, i) };
}

function heldNote(n: number): string {
  return `(${n} more ccmsg message${n === 1 ? " is" : "s are"} held for this session and will be delivered next.)`;
}

function tooLongNote(first: InboxMessage, n: number): string {
  return `(${n} ccmsg message${n === 1 ? " is" : "s are"} held for this session; the oldest, from ${first.from_label}, is ${first.text.length} characters — too long to show here. Run \`ccmsg inbox\` to read ${n === 1 ? "it" : "them"}.)`;
}
