/**
 * Shell completion scripts (bash, zsh, fish) generated from the commander program itself, so a
 * new command, flag or choice is completed the moment it is declared (nothing to keep in sync).
 *
 * All three scripts share one model: walk the words before the cursor (a subcommand name extends
 * the command path, a flag that takes a value swallows the next word), then offer the values of
 * the flag being completed, the options, the subcommands, or the positional arguments' values.
 * Profile names are asked for when completing (`tsnode profile list --names`), not baked in.
 */
import type { Argument, Command, Option } from 'commander';
import { completionHintOf, type CompletionHint } from './completion-hints.js';
import { HEADER_PREFIXES } from '../protocol/headers.js';
import { DATA_TYPES, ENGINES, ROLLUP_TYPES } from '../protocol/types.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export interface OptionSpec {
  /** `-o`, `--output`. */
  flags: string[];
  description: string;
  /** Takes a value in the next word (`<value>`; an optional `[value]` does not swallow the next word). */
  takesValue: boolean;
  value: CompletionHint;
}

export interface CompletionSpec {
  /** Space-separated path from the root: '' for `tsnode`, 'cluster up' for `tsnode cluster up`. */
  path: string;
  subcommands: Array<{ name: string; description: string }>;
  /** This command's options and every ancestor's: commander reads a parent's options anywhere after it. */
  options: OptionSpec[];
  /** What the positional arguments are completed with. */
  args: CompletionHint;
}

/** Value lists of flags declared without choices (the commands' own declarations win). */
const KNOWN_VALUES: Readonly<Record<string, CompletionHint>> = {
  '--types': { kind: 'list', values: DATA_TYPES },
  '--type': { kind: 'values', values: ROLLUP_TYPES },
  '--engine': { kind: 'values', values: ENGINES },
  '--header-prefix': { kind: 'values', values: HEADER_PREFIXES },
  '--kind': { kind: 'values', values: DATA_TYPES },
  '--profile': { kind: 'profiles' },
};
const OUTPUT_WORDS = ['table', 'json', 'csv', 'chart', 'text'];

function hidden(cmd: Command): boolean {
  return (cmd as unknown as { _hidden?: boolean })._hidden === true;
}

function valueHint(o: Option): CompletionHint {
  const attached = completionHintOf(o);
  if (attached) return attached;
  if (o.argChoices) return { kind: 'values', values: o.argChoices };
  const known = o.long ? KNOWN_VALUES[o.long] : undefined;
  if (known) return known;
  if (o.long === '--output') {
    const named = OUTPUT_WORDS.filter((w) => new RegExp(`\\b${w}\\b`).test(o.description));
    return { kind: 'values', values: named.length ? named : ['table', 'json', 'csv'] };
  }
  // `<file>`, `<dir>`, `<file|list>`: a path; anything else (`<time>`, `<n>`) is free text.
  return /<[^>]*(file|dir|path)[^>]*>/i.test(o.flags) ? { kind: 'files' } : { kind: 'none' };
}

function argsHint(cmd: Command): CompletionHint {
  const args: readonly Argument[] = cmd.registeredArguments;
  if (args.length === 0) return { kind: 'none' };
  const first = args[0]!;
  const attached = completionHintOf(first);
  if (attached) return attached;
  if (first.argChoices) return { kind: 'values', values: first.argChoices };
  return /file|dir|path/i.test(first.name()) ? { kind: 'files' } : { kind: 'none' };
}

function optionSpec(o: Option): OptionSpec {
  return {
    flags: [o.short, o.long].filter((f): f is string => Boolean(f)),
    description: o.description,
    takesValue: o.required,
    value: o.required || o.optional ? valueHint(o) : { kind: 'none' },
  };
}

/** Flattens the program into one spec per command path, root first. */
export function completionSpecs(program: Command): CompletionSpec[] {
  const specs: CompletionSpec[] = [];
  const help: OptionSpec = { flags: ['-h', '--help'], description: 'show help', takesValue: false, value: { kind: 'none' } };
  const visit = (cmd: Command, path: string, inherited: OptionSpec[]): void => {
    // `--version` belongs to the program alone; offering it after a command is noise.
    const own = cmd.options.filter((o) => !o.hidden && !(cmd !== program && o.long === '--version')).map(optionSpec);
    const options = [...own, ...inherited, help];
    const visible = cmd.commands.filter((c) => !hidden(c));
    const subcommands = visible.flatMap((c) => [c.name(), ...c.aliases()].map((name) => ({ name, description: c.description() })));
    // commander adds an implicit `help [command]` to commands with subcommands.
    if (visible.length > 0 && !subcommands.some((s) => s.name === 'help')) subcommands.push({ name: 'help', description: 'show help for a command' });
    specs.push({ path, subcommands, options, args: argsHint(cmd) });
    if (visible.length > 0) specs.push({ path: path ? `${path} help` : 'help', subcommands: [], options: [help], args: { kind: 'values', values: visible.map((c) => c.name()) } });
    const passDown = [...own.filter((o) => !(cmd === program && o.flags.includes('--version'))), ...inherited];
    for (const sub of visible) visit(sub, path ? `${path} ${sub.name()}` : sub.name(), passDown);
  };
  visit(program, '', []);
  return specs;
}

const q = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** The spec and value tables as POSIX `case` blocks: the same text works in bash and zsh. */
function shellTables(name: string, specs: CompletionSpec[]): { spec: string; value: string } {
  const argsOf = (h: CompletionHint): string => (h.kind === 'values' || h.kind === 'list' ? `${h.kind}:${h.values.join(' ')}` : h.kind);
  const spec = specs
    .map((s) => {
      const opts = s.options.flatMap((o) => o.flags);
      const vopts = s.options.filter((o) => o.takesValue).flatMap((o) => o.flags);
      return `    ${q(s.path)}) subs=${q(s.subcommands.map((c) => c.name).join(' '))}; opts=${q(opts.join(' '))}; vopts=${q(` ${vopts.join(' ')} `)}; args=${q(argsOf(s.args))} ;;`;
    })
    .join('\n');
  const value = specs
    .flatMap((s) =>
      s.options
        .filter((o) => o.takesValue && o.value.kind !== 'none')
        .flatMap((o) => o.flags.map((f) => `    ${q(`${s.path}|${f}`)}) kind=${q(argsOf(o.value))} ;;`)),
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

function ident(program: Command): string {
  return program.name().replace(/[^a-zA-Z0-9_]/g, '_');
}

/** A bash completion script: `source <(tsnode completion bash)`. */
export function bashCompletion(program: Command): string {
  const name = program.name();
  const id = ident(program);
  const { spec, value } = shellTables(id, completionSpecs(program));
  return `# ${name} completion for bash. Generated by \`${name} completion bash\` from the command definitions.
# Install: echo 'source <(${name} completion bash)' >> ~/.bashrc
#      or: ${name} completion bash > ~/.local/share/bash-completion/completions/${name}
${spec}

${value}

# Offers the words of a kind (values:a b, list:a b, profiles, files) that start with $2, each prefixed with $3.
_${id}_offer() {
  local kind="$1" cur="$2" pre="$3" head='' words=''
  case "$kind" in
    values:*) words="\${kind#values:}" ;;
    list:*) words="\${kind#list:}"; [[ "$cur" == *,* ]] && head="\${cur%,*},"; cur="\${cur##*,}"; compopt -o nospace 2>/dev/null ;;
    profiles) words="$("\${COMP_WORDS[0]}" profile list --names 2>/dev/null)" ;;
    files) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -P "$pre" -f -- "$cur") ); return 0 ;;
    *) return 0 ;;
  esac
  COMPREPLY=( $(compgen -P "$pre$head" -W "$words" -- "$cur") )
}

_${id}_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev='' cpath='' word subs opts vopts args kind i skip=0 flag='' pre=''
  (( COMP_CWORD > 0 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  COMPREPLY=()
  # Walk the words before the cursor: subcommand names extend the path; a flag that takes a value
  # swallows the next word (bash splits \`--flag=value\` into \`--flag\`, \`=\`, \`value\`).
  for (( i = 1; i < COMP_CWORD; i++ )); do
    word="\${COMP_WORDS[i]}"
    if (( skip )); then [[ "$word" == "=" ]] || skip=0; continue; fi
    _${id}_spec "$cpath"
    case "$word" in
      --*=*) ;;
      -*) [[ "$vopts" == *" $word "* ]] && skip=1 ;;
      *) [[ " $subs " == *" $word "* ]] && cpath="\${cpath:+$cpath }$word" ;;
    esac
  done
  _${id}_spec "$cpath"
  if [[ "$cur" == "=" && "$vopts" == *" $prev "* ]]; then flag="$prev"; cur=''; pre='='
  elif [[ "$prev" == "=" ]] && (( COMP_CWORD > 1 )); then flag="\${COMP_WORDS[COMP_CWORD-2]}"
  elif [[ "$cur" == --*=* ]]; then flag="\${cur%%=*}"; pre="$flag="; cur="\${cur#*=}"
  elif (( skip )); then flag="$prev"
  fi
  if [[ -n "$flag" ]]; then
    [[ "$vopts" == *" $flag "* ]] || return 0
    _${id}_value "$cpath" "$flag"
    _${id}_offer "$kind" "$cur" "$pre"
  elif [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  elif [[ -n "$subs" ]]; then
    COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
  else
    _${id}_offer "$args" "$cur" ''
  fi
  return 0
}
complete -F _${id}_complete ${name}
`;
}

/**
 * A native zsh completion script (no bashcompinit): the same tables and walk, with zsh's 1-based
 * \`words\` and CURRENT. Candidates are filtered here and added with \`compadd -U\`, as bash's compgen does.
 */
export function zshCompletion(program: Command): string {
  const name = program.name();
  const id = ident(program);
  const { spec, value } = shellTables(id, completionSpecs(program));
  return `#compdef ${name}
# ${name} completion for zsh. Generated by \`${name} completion zsh\` from the command definitions.
# Install: echo 'source <(${name} completion zsh)' >> ~/.zshrc
#      or: ${name} completion zsh > "\${fpath[1]}/_${name}"
${spec}

${value}

# Adds the words of a kind (values:a b, list:a b, profiles, files) that start with $2, each prefixed with $3.
_${id}_offer() {
  local kind="$1" cur="$2" pre="$3" head='' w
  local -a cand out suffix
  case "$kind" in
    values:*) cand=(\${=\${kind#values:}}) ;;
    list:*) cand=(\${=\${kind#list:}}); [[ "$cur" == *,* ]] && head="\${cur%,*},"; cur="\${cur##*,}"; suffix=(-S '') ;;
    profiles) cand=(\${(f)"$(\${words[1]:-${name}} profile list --names 2>/dev/null)"}) ;;
    files) [[ -n "$pre" ]] && compset -P '*='; _files; return ;;
    *) return 1 ;;
  esac
  for w in "\${cand[@]}"; do [[ "$w" == "$cur"* ]] && out+=("$pre$head$w"); done
  (( \${#out} )) && compadd -U -Q "\${suffix[@]}" -- "\${out[@]}"
}

_${id}() {
  local cur="\${words[CURRENT]}" prev="\${words[CURRENT-1]}" cpath='' word subs opts vopts args kind i skip=0 flag='' pre='' w
  local -a out
  for (( i = 2; i < CURRENT; i++ )); do
    word="\${words[i]}"
    if (( skip )); then skip=0; continue; fi
    _${id}_spec "$cpath"
    case "$word" in
      --*=*) ;;
      -*) [[ "$vopts" == *" $word "* ]] && skip=1 ;;
      *) [[ " $subs " == *" $word "* ]] && cpath="\${cpath:+$cpath }$word" ;;
    esac
  done
  _${id}_spec "$cpath"
  if [[ "$cur" == --*=* ]]; then flag="\${cur%%=*}"; pre="$flag="; cur="\${cur#*=}"
  elif (( skip )); then flag="$prev"
  fi
  if [[ -n "$flag" ]]; then
    [[ "$vopts" == *" $flag "* ]] || return 1
    _${id}_value "$cpath" "$flag"
    _${id}_offer "$kind" "$cur" "$pre"
    return
  fi
  if [[ "$cur" == -* ]]; then
    for w in \${=opts}; do [[ "$w" == "$cur"* ]] && out+=("$w"); done
  elif [[ -n "$subs" ]]; then
    for w in \${=subs}; do [[ "$w" == "$cur"* ]] && out+=("$w"); done
  else
    _${id}_offer "$args" "$cur" ''
    return
  fi
  (( \${#out} )) && compadd -U -Q -- "\${out[@]}"
}

if (( $+functions[compdef] )); then
  compdef _${id} ${name}
else
  # Not loaded yet (no compinit in ~/.zshrc): load it, then register.
  autoload -U compinit && compinit && compdef _${id} ${name}
fi
`;
}

const fq = (s: string): string => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** A fish completion script, with descriptions: `tsnode completion fish | source`. */
export function fishCompletion(program: Command): string {
  const name = program.name();
  const id = ident(program);
  const specs = completionSpecs(program);
  const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();
  const argsOf = (h: CompletionHint): string => (h.kind === 'values' || h.kind === 'list' ? `${h.kind}:${h.values.join(' ')}` : h.kind);
  const specCases = specs
    .map((s) => {
      const optWords = s.options.flatMap((o) => o.flags.map((f) => `${f}\t${oneLine(o.description)}`));
      const subWords = s.subcommands.map((c) => `${c.name}\t${oneLine(c.description)}`);
      const vopts = s.options.filter((o) => o.takesValue).flatMap((o) => o.flags);
      return [
        `    case ${fq(s.path)}`,
        `      set -g __${id}_subs ${s.subcommands.map((c) => fq(c.name)).join(' ')}`,
        `      set -g __${id}_subwords ${subWords.map(fq).join(' ')}`,
        `      set -g __${id}_optwords ${optWords.map(fq).join(' ')}`,
        `      set -g __${id}_vopts ${vopts.map(fq).join(' ')}`,
        `      set -g __${id}_args ${fq(argsOf(s.args))}`,
      ].join('\n');
    })
    .join('\n');
  const valueCases = specs
    .flatMap((s) =>
      s.options
        .filter((o) => o.takesValue && o.value.kind !== 'none')
        .flatMap((o) => o.flags.map((f) => `    case ${fq(`${s.path}|${f}`)}\n      echo ${fq(argsOf(o.value))}`)),
    )
    .join('\n');
  return `# ${name} completion for fish. Generated by \`${name} completion fish\` from the command definitions.
# Install: ${name} completion fish > ~/.config/fish/completions/${name}.fish
function __${id}_spec --argument-names p
  switch $p
${specCases}
    case '*'
      set -g __${id}_subs
      set -g __${id}_subwords
      set -g __${id}_optwords
      set -g __${id}_vopts
      set -g __${id}_args none
  end
end

function __${id}_value --argument-names p flag
  switch "$p|$flag"
${valueCases}
    case '*'
      echo none
  end
end

# Prints the words of a kind (values:a b, list:a b, profiles, files) for the token $cur, each prefixed with $pre.
function __${id}_offer --argument-names kind cur pre cmd
  set -l head ''
  test -n "$pre"; and set cur (string replace -- "$pre" '' $cur)
  switch $kind
    case 'values:*'
      for w in (string split ' ' -- (string replace 'values:' '' -- $kind))
        echo "$pre$w"
      end
    case 'list:*'
      if string match -q '*,*' -- $cur
        set head (string replace -r ',[^,]*$' ',' -- $cur)
      end
      for w in (string split ' ' -- (string replace 'list:' '' -- $kind))
        echo "$pre$head$w"
      end
    case profiles
      for w in ($cmd profile list --names 2>/dev/null)
        echo "$pre$w"
      end
    case files
      for f in (__fish_complete_path $cur)
        echo "$pre$f"
      end
  end
end

function __${id}_complete
  set -l tokens (commandline -opc)
  set -l cur (commandline -ct)
  set -l cpath ''
  set -l skip 0
  for word in $tokens[2..-1]
    if test $skip -eq 1
      set skip 0
      continue
    end
    __${id}_spec "$cpath"
    if string match -q -- '--*=*' $word
      continue
    else if string match -q -- '-*' $word
      if contains -- $word $__${id}_vopts
        set skip 1
      end
    else if contains -- $word $__${id}_subs
      if test -n "$cpath"
        set cpath "$cpath $word"
      else
        set cpath $word
      end
    end
  end
  __${id}_spec "$cpath"
  set -l flag ''
  set -l pre ''
  if string match -q -- '--*=*' $cur
    set flag (string replace -r '=.*$' '' -- $cur)
    set pre "$flag="
  else if test $skip -eq 1
    set flag $tokens[-1]
  end
  if test -n "$flag"
    contains -- $flag $__${id}_vopts; or return
    __${id}_offer (__${id}_value "$cpath" $flag) $cur "$pre" $tokens[1]
  else if string match -q -- '-*' $cur
    printf '%s\\n' $__${id}_optwords
  else if set -q __${id}_subs[1]
    printf '%s\\n' $__${id}_subwords
  else
    __${id}_offer $__${id}_args $cur '' $tokens[1]
  end
end

complete -c ${name} -f -a '(__${id}_complete)'
`;
}

export function completionScript(shell: Shell, program: Command): string {
  if (shell === 'bash') return bashCompletion(program);
  if (shell === 'zsh') return zshCompletion(program);
  return fishCompletion(program);
}
