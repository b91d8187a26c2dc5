import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, outcome, runCli } from '../helpers/cli.js';

// `scanhub completion bash|zsh|fish` (DESIGN.md "CLI conventions"): the bash script sourced in a
// bash process completes as a person's TAB would, asking the CLI itself (`scanhub __complete`).
const bin = mkdtempSync(join(tmpdir(), 'scanhub-completion-'));
writeFileSync(join(bin, 'scanhub'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
chmodSync(join(bin, 'scanhub'), 0o755);
afterAll(() => rmSync(bin, { recursive: true, force: true }));

/** What bash offers for the command line `words` (the last one being typed) after sourcing the script. */
function tab(words: string[]): Promise<string> {
  const script = `source <(scanhub completion bash)
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}
_scanhub
printf '%s\\n' "\${COMPREPLY[@]}"`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { env: { PATH: `${bin}:${process.env.PATH}`, HOME: bin } });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => resolve(stdout));
  });
}

describe('scanhub completion', () => {
  it.each([
    [['scanhub', 'gat'], 'gateways\n'],
    [['scanhub', 'gateways', 're'], 'revoke\nreprovision\n'],
    [['scanhub', '--url', 'http://x', 'events', 'list', '--si'], '--since\n'],
    [['scanhub', 'gateways', 'list', '--js'], '--json\n'],
    [['scanhub', 'zzz'], '\n'],
  ])('bash completes %j', async (words, offered) => {
    expect(await tab(words)).toBe(offered);
  });

  it.each([['zsh', '#compdef scanhub\n'], ['fish', '# scanhub completion for fish']])('prints the %s script', async (shell, start) => {
    const result = await runCli(['completion', shell]);
    expect([result.code, result.stderr, result.stdout.startsWith(start), result.stdout.includes('scanhub __complete')]).toEqual([0, '', true, true]);
  });

  it('refuses another shell (exit 2)', async () => {
    expect(outcome(await runCli(['completion', 'tcsh']))).toEqual({
      code: 2,
      stdout: '',
      stderr: "error: command-argument value 'tcsh' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.\n(run with --help for usage)\n",
    });
  });
});
