import { describe, expect, it } from 'vitest';
import { csvCell, csvLine } from './csv.ts';

describe('csv', () => {
  it('quotes commas, quotes and line breaks (RFC 4180)', () => {
    expect(csvLine(['a', 'b,c', 'say "hi"', 'two\nlines'])).toBe('a,"b,c","say ""hi""","two\nlines"\r\n');
  });

  it('quotes what needs quoting and leaves the rest bare', () => {
    expect(csvLine(['a', 1, null, true])).toBe('a,1,,true\r\n');
    expect(csvLine(['x,y', 'say "hi"', '# Title\n\nbody'])).toBe('"x,y","say ""hi""","# Title\n\nbody"\r\n');
  });

  it('defuses spreadsheet formulas', () => {
    expect(csvCell('=HYPERLINK("http://evil")')).toBe(`"'=HYPERLINK(""http://evil"")"`);
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
  });

  it('writes empty cells for null, ISO times for dates and JSON for objects', () => {
    expect(csvLine([null, undefined, new Date(0)])).toBe(',,1970-01-01T00:00:00.000Z\r\n');
    expect(csvCell(['markdown', 'text'])).toBe('"[""markdown"",""text""]"');
  });
});
