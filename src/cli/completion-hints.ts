/**
 * What shell completion offers for a flag's value or a positional argument, beyond what commander
 * knows (`choices`). Declarations attach a hint; completion.ts reads it. No imports: loaded at startup.
 */

export type CompletionHint =
  /** One of these words. */
  | { kind: 'values'; values: readonly string[] }
  /** A comma list of these words (`--types nnt,histogram`). */
  | { kind: 'list'; values: readonly string[] }
  /** A profile name from the config file, asked for when completing (`tsnode profile list --names`). */
  | { kind: 'profiles' }
  /** A file path. */
  | { kind: 'files' }
  /** Free text: offer nothing. */
  | { kind: 'none' };

const hints = new WeakMap<object, CompletionHint>();

/** Attaches a completion hint to a commander Option or Argument; returns it for chaining. */
export function completeWith<T extends object>(target: T, hint: CompletionHint): T {
  hints.set(target, hint);
  return target;
}

export function completionHintOf(target: object): CompletionHint | undefined {
  return hints.get(target);
}
