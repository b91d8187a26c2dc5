import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { csvField, csvRecord, startsFormula } from '../../src/domain/csv.js';

describe('csvRecord', () => {
  it.each([
    [['a', 'b'], 'a,b\r\n'],
    [['A,B', 'say "hi"'], '"A,B","say ""hi"""\r\n'],
    [['line\nbreak', 'cr\rx', 'crlf\r\ny'], '"line\nbreak","cr\rx","crlf\r\ny"\r\n'],
    [[null, undefined, '', 0, -3.5, 0.87], ',,,0,-3.5,0.87\r\n'],
    [[' padded ', 'Grüße 日本', 'M001-000123', "it's"], " padded ,Grüße 日本,M001-000123,it's\r\n"],
  ])('%j', (values, expected) => {
    expect(csvRecord(values)).toBe(expected);
    expect(csvRecord(values, 'raw')).toBe(expected);
  });

  // Safe (the default) and raw: a leading ' before text a spreadsheet would take for a formula, then RFC 4180 quoting.
  it.each([
    ['=SUM(A1)', "'=SUM(A1)", '=SUM(A1)'],
    ['=HYPERLINK("http://x","y")', `"'=HYPERLINK(""http://x"",""y"")"`, `"=HYPERLINK(""http://x"",""y"")"`],
    ['+1+2', "'+1+2", '+1+2'],
    ['-3+4', "'-3+4", '-3+4'],
    ['@SUM(A1:A2)', "'@SUM(A1:A2)", '@SUM(A1:A2)'],
    ['\t=1+1', "'\t=1+1", '\t=1+1'],
    ['\r=1+1', `"'\r=1+1"`, '"\r=1+1"'],
    ["=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0", "=cmd|' /C calc'!A0"],
    ['-', "'-", '-'],
    // Not at the start, or not one of the six: as stored.
    ['a=1', 'a=1', 'a=1'],
    [' =1', ' =1', ' =1'],
    ['\n=1', '"\n=1"', '"\n=1"'],
    ["'=1", "'=1", "'=1"],
  ])('text %j: safe %j, raw %j', (text, safe, raw) => {
    expect(csvField(text)).toBe(safe);
    expect(csvField(text, true)).toBe(raw);
    expect(csvRecord([text, 1])).toBe(`${safe},1\r\n`);
    expect(csvRecord([text, 1], 'raw')).toBe(`${raw},1\r\n`);
  });

  it('writes numbers as numbers in either mode: a negative number is not a formula', () => {
    expect(csvRecord([-3.5, -0, -1e-7, 12], 'safe')).toBe('-3.5,0,-1e-7,12\r\n');
    expect(startsFormula('')).toBe(false);
    expect(csvField('')).toBe('');
  });

  it('writes the same bytes as csv-stringify for awkward values, raw and with escape_formulas', () => {
    const alphabet = ['a', 'Z', ',', '"', '\n', '\r', ' ', 'é', '日', ';', "'", '\t', '=', '+', '-', '@', '1', ''];
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const records = Array.from({ length: 1000 }, () =>
      Array.from({ length: 6 }, (_, column) => {
        if (column === 4) return random() < 0.3 ? null : Math.round(random() * 1e6) / 100 - 5000;
        return Array.from({ length: Math.floor(random() * 8) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      }),
    );
    // quote_record_delimiter: with a CRLF record delimiter csv-stringify would leave a lone LF or CR
    // unquoted, which spreadsheets and Python's csv read as the end of the record.
    const options = { record_delimiter: 'windows', quote_record_delimiter: true } as const;
    const safe = records.map((record) => csvRecord(record)).join('');
    expect(safe).toBe(stringify(records, { ...options, escape_formulas: true }));
    expect(records.map((record) => csvRecord(record, 'raw')).join('')).toBe(stringify(records, options));
    // The sample does exercise the rule: some text cells and some negative numbers.
    expect(safe.match(/(^|,)"?'[-=+@\t\r]/gm)?.length).toBeGreaterThan(100);
    expect(safe.match(/,-\d/g)?.length).toBeGreaterThan(100);
    expect(csvField('"')).toBe('""""');
  });
});
