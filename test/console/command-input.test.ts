// The body the console's command form sends (console/pages/gateways/commands/command-input.ts):
// feedback's sequence, display's template and `key=value` fields as the CLI's --param reads them,
// the scanner only when named, and a sentence naming the line that is not key=value.
import { describe, expect, it } from 'vitest';
import { commandInput, commandSummary, describeParameters, INITIAL_VALUES, parseFields } from '../../console/pages/gateways/commands/command-input.js';

describe('the command form\'s body', () => {
  it('sends feedback with its sequence and lifetime, naming the scanner only when one is given', () => {
    expect(commandInput({ ...INITIAL_VALUES, sequence: 'NOK', deviceId: ' ring-7 ', ttlSeconds: 600 })).toEqual({
      name: 'feedback',
      parameters: { sequence: 'NOK' },
      ttl_seconds: 600,
      device_id: 'ring-7',
    });
    expect(commandInput({ ...INITIAL_VALUES, deviceId: '' })).toEqual({ name: 'feedback', parameters: { sequence: 'OK' }, ttl_seconds: 3600 });
  });

  it('sends display with its template and the fields of key=value lines, blank lines skipped and keys trimmed', () => {
    expect(commandInput({ ...INITIAL_VALUES, name: 'display', template: 'pick', fields: 'qty=3\n\n bin = A-7 \nnote=a=b', deviceId: '' })).toEqual({
      name: 'display',
      parameters: { template: 'pick', fields: { qty: '3', bin: 'A-7', note: 'a=b' } },
      ttl_seconds: 3600,
    });
  });

  it('refuses a line that is not key=value and a key given twice, naming the line', () => {
    const failure = (text: string) => {
      try {
        parseFields(text);
        return undefined;
      } catch (error) {
        return (error as Error).message;
      }
    };
    expect(failure('qty=3\nqty 4')).toBe('Line 2 of Fields, "qty 4", is not key=value: write one field a line, such as qty=3.');
    expect(failure('=4')).toBe('Line 1 of Fields, "=4", is not key=value: write one field a line, such as qty=3.');
    expect(failure('qty=3\nqty=4')).toBe('Fields names "qty" twice (line 2): keep one.');
    expect(parseFields('')).toEqual({});
  });

  it('says a command in a few words: feedback\'s sequence, display\'s template and fields, JSON for the rest', () => {
    expect(commandSummary({ name: 'feedback', parameters: { sequence: 'OK' } })).toBe('feedback (OK)');
    expect(commandSummary({ name: 'display', parameters: { template: 'pick', fields: { qty: 3, bin: 'A-7' } } })).toBe('display (pick: qty=3, bin=A-7)');
    expect(commandSummary({ name: 'display', parameters: { template: 'idle' } })).toBe('display (idle)');
    expect(commandSummary({ name: 'configure', parameters: { job_config_id: 'j-1' } })).toBe('configure ({"job_config_id":"j-1"})');
    expect(describeParameters('reboot', {})).toBe('');
    expect(commandSummary({ name: 'reboot', parameters: {} })).toBe('reboot');
  });
});
