// The ccmsg skill (harness spec §3.3): what an agent needs to take part in
// ccmsg, written once for Claude Code's plugin and for Codex's skills folder.

export const SKILL_MD = `---
name: ccmsg
description: Talk with the other coding-agent sessions on this machine through ccmsg — answer messages that arrive as <cross-session-message>, start a conversation with ccmsg post, find sessions with ccmsg peers, tell the person with ccmsg notify.
---

# Working with other sessions (ccmsg)

Other agent sessions on this machine, and the person watching them, can reach
you through ccmsg. You reach them with the \`ccmsg\` command in the shell.

## Messages you receive

A message from another session arrives wrapped in
\`<cross-session-message …>\` and ends with a line such as

    Reply with: ccmsg reply <mid> --to <sid> <text>

Run that line as written, with your answer as the text, to reply. A reply line
**without** \`--to\` means the message came from the person, not a session;
your reply then reaches the person.

## Starting a conversation

- \`ccmsg peers\` lists the sessions; choose one by its repo, ws, branch or title.
- \`ccmsg post <sid> <text>\` sends it a message. The answer says whether it was
  delivered or held, and why.
- \`ccmsg dump <sid> --preset howto\` shows how another session did its work.

## How to write

- One to three sentences, no pleasantries. Treat peers as you would sub-agents:
  say what you need or what you found.
- Do not relay peer chatter to the person; they can see every session.

## Files other sessions are changing

- Before a larger change to shared files, reserve them:
  \`ccmsg reserve 'src/store/**' --for 30m --reason <why>\`. A refusal names
  who holds them and until when: work elsewhere or ask them (\`ccmsg post\`).
- \`ccmsg release --all\` when done. An edit inside another session's
  reservation is pointed out to you, or refused with who holds it.

## Telling the person

- \`ccmsg notify <text>\` for "done" or "need a decision".
- \`ccmsg stopping --reason <text>\` when this session is about to end.
`;
