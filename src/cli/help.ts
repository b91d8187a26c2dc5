import { Help, type Command, type HelpConfiguration, type Option } from 'commander';

/**
 * The end of a command's help (DESIGN.md "CLI conventions": every help ends with an example):
 * `notes` first (what the flags' values mean), then the examples, one command a line.
 */
export function examples(lines: string[], notes = ''): string {
  return `${notes ? `\n${notes}\n` : ''}\n${lines.length === 1 ? 'Example' : 'Examples'}:\n${lines.map((line) => `  ${line}`).join('\n')}`;
}

/** Adds the examples to a command's help: `command.addHelpText('after', examples(...))`. */
export function withExamples(command: Command, lines: string[], notes = ''): Command {
  return command.addHelpText('after', examples(lines, notes));
}

/**
 * How every help is laid out (set on the program before its commands, which inherit it): the
 * global options it accepts listed too, and options that must be given marked "(required)".
 */
export const HELP: HelpConfiguration = {
  showGlobalOptions: true,
  optionDescription(this: Help, option: Option): string {
    const text = Help.prototype.optionDescription.call(this, option);
    return option.mandatory ? `(required) ${text}` : text;
  },
};
