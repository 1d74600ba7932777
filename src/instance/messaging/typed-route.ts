import type { Sid } from "../../contract/identifiers.js";
import { promptBox, typeable } from "../../harness/claude/prompt-box.js";
import {
  findSessionFile,
  type LiveSessionFile,
  tmuxPane,
} from "../../harness/claude/session-files.js";
import { capturePane, type TmuxPane, typeLine } from "../../harness/tmux.js";
import { locateTranscript } from "../../harness/transcript-files.js";
import { transcriptEnd, typedTurnAt } from "../../harness/transcript-mentions.js";
import type { Logger } from "../../util/logger.js";

// The typed route (DR-0055): a person's message typed into the session's
// tmux pane, so Claude Code records it as the person's own prompt (a plain
// `user` turn), not as a message from another session. Only into a pane
// whose session is idle with no dialog open and whose input box is empty —
// never over someone's unsent text. Whatever is not typed goes by the other
// routes, as from the person.

/** The longest text typed: a long burst of keys may be read as a paste. */
export const TYPED_MAX_CHARS = 2000;
/** How long the transcript is watched for the typed turn: Claude Code writes
 * it as it submits the prompt, well within this. */
export const TYPED_CONFIRM_MS = 5000;
const CONFIRM_POLL_MS = 100;

export interface TypedSetup {
  /** On with route (a), for Claude Code only. */
  enabled: boolean;
  /** The config home this instance serves. */
  home: string;
  env: NodeJS.ProcessEnv;
  /** The state-file lookup (a seam for tests). */
  find?: (home: string, sid: Sid) => Promise<LiveSessionFile | undefined>;
  /** How long the typed turn is looked for (TYPED_CONFIRM_MS; shorter in tests). */
  confirmMs?: number;
}

/** `confirmed`: the transcript has the turn (at `at`); `unconfirmed`: the
 * keys were sent and the turn was not seen in time. Either way it was typed,
 * so no other route may carry it too. */
export type TypedOutcome = { typed: "confirmed"; at: number } | { typed: "unconfirmed" };

export class TypedRoute {
  private readonly busy = new Set<Sid>();
  private readonly find;

  constructor(
    private readonly setup: TypedSetup,
    private readonly log: Logger,
  ) {
    this.find = setup.find ?? findSessionFile;
  }

  /** Whether a line is being typed into `sid`'s pane now. */
  isBusy(sid: Sid): boolean {
    return this.busy.has(sid);
  }

  /** Type `text` into `sid`'s pane as its person's prompt, or undefined when
   * the route is not open now (nothing was typed). */
  async deliver(sid: Sid, text: string): Promise<TypedOutcome | undefined> {
    if (!this.setup.enabled || this.busy.has(sid) || !typeable(text, TYPED_MAX_CHARS))
      return undefined;
    this.busy.add(sid);
    try {
      // A first look, so a session with no pane costs no transcript lookup.
      if ((await this.readyPane(sid)) === undefined) return undefined;
      let path = await locateTranscript("claude", this.setup.home, sid).catch(() => undefined);
      const from = await transcriptEnd(path);
      // The last look, right before the keys: nothing awaited in between
      // but tmux itself.
      const pane = await this.readyPane(sid);
      if (pane === undefined) return undefined;
      const sent = await typeLine(pane, text, this.setup.env);
      if (!sent.ok && sent.failure !== "timeout") {
        this.log.info({ sid, stderr: sent.stderr.trim() }, "typed route: tmux refused");
        return undefined;
      }
      const deadline = Date.now() + (this.setup.confirmMs ?? TYPED_CONFIRM_MS);
      for (;;) {
        path ??= await locateTranscript("claude", this.setup.home, sid).catch(() => undefined);
        const at = path === undefined ? undefined : await typedTurnAt(path, text, from);
        if (at !== undefined) return { typed: "confirmed", at };
        if (Date.now() >= deadline) break;
        await new Promise((r) => setTimeout(r, CONFIRM_POLL_MS));
      }
      this.log.warn({ sid, pane: pane.pane }, "typed route: the turn was not seen in time");
      return { typed: "unconfirmed" };
    } finally {
      this.busy.delete(sid);
    }
  }

  /** The session's pane when it is idle, no dialog is open, and its input
   * box is on screen and empty. */
  private async readyPane(sid: Sid): Promise<TmuxPane | undefined> {
    const row = await this.find(this.setup.home, sid).catch(() => undefined);
    const pane = row?.tmux === undefined ? undefined : tmuxPane(row.tmux);
    if (row === undefined || pane === undefined) return undefined;
    if (row.status !== "idle" || row.waitingFor !== undefined) return undefined;
    const target: TmuxPane = { pane };
    if (row.tmuxSocket !== undefined) target.socket = row.tmuxSocket;
    const screen = await capturePane(target, this.setup.env);
    return screen !== undefined && promptBox(screen) === "empty" ? target : undefined;
  }
}
