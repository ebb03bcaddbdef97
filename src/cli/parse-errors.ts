/**
 * commander's own parse errors (unknown option or command, bad choice, missing argument) turned
 * into tsnode's errors, so they print as `error: ...` / `hint: ...` with a "did you mean" like
 * every other usage error. Pure: no printing here.
 */
import type { Command, CommanderError, Option } from 'commander';
import { CliError, UsageError, type CliErrorCode } from './errors.js';
import { EXIT } from './exit-codes.js';
import { didYouMean } from './suggest.js';
import { parseChoice } from './values.js';

/** `tsnode sweep cancel`. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The options commander accepts for `cmd`: its own and every ancestor's (they are read anywhere). */
export function acceptedOptions(cmd: Command): Option[] {
  const out: Option[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) out.push(...c.options.filter((o) => !o.hidden));
  return out;
}

/** `usage: tsnode read [options] <uuid> <metric>` (commander's usage line already names the parents). */
function usageOf(cmd: Command): string {
  return `usage: ${cmd.createHelp().commandUsage(cmd)}`;
}

function usage(code: CliErrorCode, message: string, hint: string): CliError {
  return new UsageError(message, hint, EXIT.usage, code);
}

/** Finds an option by the `flags` text commander quotes in its messages (`-o, --output <format>`). */
function optionByFlags(cmd: Command, flags: string): Option | undefined {
  return acceptedOptions(cmd).find((o) => o.flags === flags);
}

/** A value commander refused: a declared choice of an option or an argument. */
function invalidArgument(text: string, cmd: Command, where: string, help: string): CliError {
  // A declared choice (`.choices()`); our own value parsers throw InvalidValueError themselves.
  const opt = /^option '(.*)' argument '(.*)' is invalid/s.exec(text);
  if (opt) {
    const option = optionByFlags(cmd, opt[1]!);
    const field = option?.long ?? option?.short ?? opt[1]!;
    if (option?.argChoices) {
      try {
        parseChoice(opt[2]!, field, option.argChoices);
      } catch (e) {
        if (e instanceof CliError) return e;
      }
    }
    return usage('invalid_value', `${field}: ${JSON.stringify(opt[2])} is not valid`, `${help} says what it takes`);
  }
  const arg = /^command-argument value '(.*)' is invalid for argument '(.*)'\. Allowed choices are (.*)\.$/s.exec(text);
  if (arg) {
    const choices = arg[3]!.split(', ');
    return usage('invalid_value', `${where}: ${JSON.stringify(arg[1])} is not one of ${choices.join(', ')}`, didYouMean(arg[1]!, choices) ?? `use one of: ${choices.join(', ')}`);
  }
  return usage('invalid_value', text, `${help} says what it takes`);
}

export function parseError(err: CommanderError, cmd: Command): CliError {
  const text = err.message.replace(/^error: /, '');
  const where = commandPath(cmd);
  const help = `${where} --help`;
  switch (err.code) {
    case 'commander.unknownOption': {
      const flag = /unknown option '(.*)'/.exec(text)?.[1] ?? text;
      const bare = flag.replace(/=.*$/, '');
      const candidates = acceptedOptions(cmd).flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)));
      // A one-letter flag is too short to guess from (`-x` is as close to -q as to -v).
      const close = bare.startsWith('--')
        ? didYouMean(
            bare,
            [...candidates, '--help'].filter((c) => c.startsWith('--')),
          )
        : undefined;
      return usage('unknown_option', `unknown option ${bare} for ${where}`, close ? `${close} (${help} lists the options)` : `${help} lists the options`);
    }
    case 'commander.unknownCommand': {
      const name = /unknown command '(.*)'/.exec(text)?.[1] ?? text;
      const names = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden).flatMap((c) => [c.name(), ...c.aliases()]);
      const close = didYouMean(name, names);
      return usage(
        'unknown_command',
        `unknown command ${JSON.stringify(name)} for ${where}`,
        close ? `${close} (${help} lists the commands)` : `one of ${names.join(', ')} (${help} says more)`,
      );
    }
    case 'commander.invalidArgument':
      return invalidArgument(text, cmd, where, help);
    case 'commander.missingArgument': {
      const name = /missing required argument '(.*)'/.exec(text)?.[1] ?? '?';
      return usage('missing_argument', `${where}: the <${name}> argument is missing`, usageOf(cmd));
    }
    case 'commander.optionMissingArgument': {
      const flags = /option '(.*)' argument missing/.exec(text)?.[1] ?? text;
      const option = optionByFlags(cmd, flags);
      const name = option?.long ?? option?.short ?? flags;
      return usage('missing_argument', `${name} needs a value`, `${flags}${option?.description ? `: ${option.description}` : ''}`);
    }
    case 'commander.excessArguments': {
      const m = /Expected (\d+) arguments? but got (\d+)/.exec(text);
      const extra = cmd.args.slice(cmd.registeredArguments.length);
      const shown = extra.length ? ` (${extra.map((a) => JSON.stringify(a)).join(' ')})` : '';
      const expected = m ? `takes ${m[1]} argument${m[1] === '1' ? '' : 's'}, got ${m[2]}` : 'too many arguments';
      return usage('too_many_arguments', `${where} ${expected}${shown}`, `${usageOf(cmd)} (quote a value that has spaces)`);
    }
    case 'commander.conflictingOption':
      return usage('conflicting_options', text, `${help} says which options go together`);
    case 'commander.missingMandatoryOptionValue': {
      const flags = /required option '(.*)' not specified/.exec(text)?.[1] ?? text;
      return usage('missing_argument', `${where} needs ${flags}`, `${help} says what it takes`);
    }
    default:
      return usage('usage', `${where}: ${text}`, `${help} shows the usage`);
  }
}
