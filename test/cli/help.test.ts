import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { outcome, runCli } from '../helpers/cli.js';

// DESIGN.md "CLI conventions": --version, and every help lists its global options and ends with an example.
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Every command of the program, with its full name (`scanhub gateways list`). */
function commandsOf(command: Command, path: string[] = []): { name: string; command: Command }[] {
  const name = [...path, command.name()];
  return [{ name: name.join(' '), command }, ...command.commands.flatMap((sub) => commandsOf(sub, name))];
}

/** The whole help of a command as `--help` prints it, the text added after it included. */
function helpOf(command: Command): string {
  let text = '';
  command.configureOutput({ writeOut: (chunk) => (text += chunk) });
  command.outputHelp();
  return text;
}

describe('scanhub --version', () => {
  it.each([['--version'], ['-V']])('%s prints scanhub and the package version', async (flag) => {
    expect(outcome(await runCli([flag]))).toEqual({ code: 0, stdout: `scanhub ${VERSION}\n`, stderr: '' });
  });
});

describe('help', () => {
  it('gateways list --help names the global options it takes and ends with an example', async () => {
    const result = await runCli(['gateways', 'list', '--help']);
    expect([result.code, result.stderr]).toEqual([0, '']);
    expect(result.stdout).toMatch(/\nGlobal Options:\n {2}--url <url> [\s\S]*\n {2}--token <token> [\s\S]*\n {2}--json /);
    expect(result.stdout).toMatch(/\nExamples:\n {2}scanhub gateways list\n {2}scanhub gateways list --json\n$/);
  });

  it('marks the options a command requires', async () => {
    const result = await runCli(['gateways', 'create', '--help']);
    expect(result.stdout).toMatch(/\n {2}--name <name> +\(required\) displayed name/);
  });

  const commands = commandsOf(buildProgram());
  it('covers every command', () => expect(commands.length).toBeGreaterThan(60));

  it.each(commands.map(({ name, command }) => [name, command] as const))('%s --help ends with an example of itself', (name, command) => {
    const help = helpOf(command);
    const example = /\nExamples?:\n((?: {2}.+\n)+)$/.exec(help);
    expect(example, help).not.toBeNull();
    // Each example runs the command, or for a group one of its commands (maybe in a pipe).
    for (const line of example![1]!.trimEnd().split('\n')) expect(line.replace(/ --data-dir \S+| --database \S+/g, ''), line).toContain(name);
    if (name !== 'scanhub') expect(help).toContain('\nGlobal Options:\n');
  });
});
