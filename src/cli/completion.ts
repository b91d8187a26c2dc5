import { Argument, type Command, type Option } from 'commander';
import { examples } from './help.js';

/**
 * `scanhub completion bash|zsh|fish` (DESIGN.md "CLI conventions"). Each script asks the CLI
 * itself for the candidates (`scanhub __complete WORD...`, after the GitHub CLI's `gh
 * __complete`), so completion knows every command and flag of the installed version and no
 * script goes stale.
 */
const SCRIPTS = {
  bash: `# scanhub completion for bash: source <(scanhub completion bash)
_scanhub() {
  local IFS=$'\\n'
  COMPREPLY=($(scanhub __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _scanhub scanhub
`,
  zsh: `#compdef scanhub
# scanhub completion for zsh: source <(scanhub completion zsh), or save as _scanhub in $fpath
_scanhub() {
  local -a candidates
  candidates=("\${(@f)$(scanhub __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -a candidates
}
compdef _scanhub scanhub
`,
  fish: `# scanhub completion for fish: scanhub completion fish > ~/.config/fish/completions/scanhub.fish
complete -c scanhub -f -a '(scanhub __complete (commandline -opc)[2..-1] (commandline -ct))'
`,
} as const;

/** The hidden command the scripts call: answered before commander parses (see main.ts). */
export const COMPLETE = '__complete';

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'the shell').choices(Object.keys(SCRIPTS)))
    .addHelpText(
      'after',
      examples(['source <(scanhub completion bash)          # in ~/.bashrc', 'scanhub completion fish > ~/.config/fish/completions/scanhub.fish']),
    )
    .action((shell: keyof typeof SCRIPTS) => void process.stdout.write(SCRIPTS[shell]));
}

/** The long flags of a command and of the commands above it. */
function flagsOf(command: Command | null): Option[] {
  return command ? [...command.options, ...flagsOf(command.parent)] : [];
}

/**
 * The candidates for the last of `words` (the words after `scanhub`, the last one being typed):
 * a subcommand or a flag of the command the earlier words name.
 */
export function completions(program: Command, words: string[]): string[] {
  const typed = words.at(-1) ?? '';
  let command = program;
  for (let i = 0; i < words.length - 1; i++) {
    const word = words[i]!;
    const option = flagsOf(command).find((o) => o.long === word || o.short === word);
    if (option) {
      // A flag that takes a value: the next word is its value, not a command.
      if (option.required || option.optional) i++;
      continue;
    }
    const sub = command.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (sub) command = sub;
  }
  if (typed.startsWith('-')) {
    return flagsOf(command)
      .filter((o) => !o.hidden && o.long?.startsWith(typed))
      .map((o) => o.long!);
  }
  return command.commands.map((c) => c.name()).filter((name) => name.startsWith(typed));
}
