import { ContractError } from "../contract/errors.js";
import { conflictQueueOf } from "../hud/collect.js";
import { controlFacts, withSessionContext } from "../hud/session-context.js";
import { conflictedWorktrees } from "../probes/git.js";
import type { Command } from "./command.js";
import { parse, print } from "./options.js";
import { requireControl } from "./require-control.js";

const USAGE = "ccmsg queue merge|conflict [--sid s]";

/** `ccmsg queue merge|conflict` — the HUD's merge and conflict queues, read
 * from the same sources (the work board; the repository's worktrees). */
export const queue: Command = async (argv) => {
  const { values, positionals } = parse(argv, {}, USAGE);
  const [which, ...extra] = positionals;
  if ((which !== "merge" && which !== "conflict") || extra.length > 0)
    throw new ContractError("invalid_args", `usage: ${USAGE}`);
  return withSessionContext(values, async (ctx, git) => {
    const control = which === "merge" ? "mergeQueue" : "conflictQueue";
    requireControl(control, controlFacts(ctx, git));
    const work = await ctx.reader?.workSignals();
    if (which === "merge") {
      const items = work?.mergeQueue ?? [];
      return print(values, { mergeQueue: items }, () =>
        items.length === 0
          ? "merge queue is empty"
          : items
              .map(
                (i) =>
                  `${(i.classification ?? "unknown").padEnd(13)} ${i.mergeGate.padEnd(10)} ${i.lane.padEnd(8)} ${i.id}  ${i.title}${i.reason ? ` (${i.reason})` : ""}`,
              )
              .join("\n"),
      );
    }
    const worktrees = git.state === "ok" ? await conflictedWorktrees(git) : undefined;
    const items = conflictQueueOf(worktrees, work);
    const list = items === "unknown" ? [] : items;
    return print(values, { conflictQueue: items }, () =>
      list.length === 0
        ? "conflict queue is empty"
        : list
            .map((i) =>
              i.kind === "worktree"
                ? `worktree  ${i.path} (${i.branch ?? "detached"}): ${i.conflicts} conflicted path${i.conflicts === 1 ? "" : "s"}`
                : `PR        ${i.id}  ${i.title} (${i.mergeStateStatus})${i.url ? ` ${i.url}` : ""}`,
            )
            .join("\n"),
    );
  });
};
