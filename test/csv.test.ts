import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { csvField, csvRecord } from '../src/domain/csv.js';

describe('csvRecord', () => {
  it.each([
    [['a', 'b'], 'a,b\r\n'],
    [['A,B', 'say "hi"'], '"A,B","say ""hi"""\r\n'],
    [['line\nbreak', 'cr\rx', 'crlf\r\ny'], '"line\nbreak","cr\rx","crlf\r\ny"\r\n'],
    [[null, undefined, '', 0, -3.5, 0.87], ',,,0,-3.5,0.87\r\n'],
    [[' padded ', '=SUM(A1)', 'Grüße 日本'], ' padded ,=SUM(A1),Grüße 日本\r\n'],
  ])('%j', (values, expected) => {
    expect(csvRecord(values)).toBe(expected);
  });

  it('writes the same bytes as csv-stringify for awkward values', () => {
    const alphabet = ['a', 'Z', ',', '"', '\n', '\r', ' ', 'é', '日', ';', "'", '\t', '=', ''];
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const records = Array.from({ length: 500 }, () =>
      Array.from({ length: 6 }, (_, column) => {
        if (column === 4) return random() < 0.3 ? null : Math.round(random() * 1e6) / 100 - 5000;
        return Array.from({ length: Math.floor(random() * 8) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
      }),
    );
    const ours = records.map(csvRecord).join('');
    // quote_record_delimiter: with a CRLF record delimiter csv-stringify would leave a lone LF or CR
    // unquoted, which spreadsheets and Python's csv read as the end of the record.
    expect(ours).toBe(stringify(records, { record_delimiter: 'windows', quote_record_delimiter: true }));
    expect(csvField('"')).toBe('""""');
  });
});
