/** One `ccmsg` command: its argv after the command's name. It prints its
 * output and throws to fail (main.ts reports the failure). */
export type Command = (argv: string[]) => Promise<void>;
