/** What the bash and zsh scripts share: the completion specs as POSIX `case` tables. */
import { hintWord, type CompletionSpec } from './spec.js';

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The spec and value tables as POSIX `case` blocks: the same text works in bash and zsh. */
export function shellTables(name: string, specs: CompletionSpec[]): { spec: string; value: string } {
  const spec = specs
    .map((s) => {
      const opts = s.options.flatMap((o) => o.flags);
      const vopts = s.options.filter((o) => o.takesValue).flatMap((o) => o.flags);
      return `    ${q(s.path)}) subs=${q(s.subcommands.map((c) => c.name).join(' '))}; opts=${q(opts.join(' '))}; vopts=${q(` ${vopts.join(' ')} `)}; args=${q(hintWord(s.args))} ;;`;
    })
    .join('\n');
  const value = specs
    .flatMap((s) =>
      s.options.filter((o) => o.takesValue && o.value.kind !== 'none').flatMap((o) => o.flags.map((f) => `    ${q(`${s.path}|${f}`)}) kind=${q(hintWord(o.value))} ;;`)),
    )
    .join('\n');
  return {
    spec: `_${name}_spec() {
  case "$1" in
${spec}
    *) subs=''; opts=''; vopts=' '; args='none' ;;
  esac
}`,
    value: `_${name}_value() {
  case "$1|$2" in
${value}
    *) kind='none' ;;
  esac
}`,
  };
}
