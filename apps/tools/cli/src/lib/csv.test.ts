import { describe, expect, it } from 'vitest';
import { csvRow } from './csv.ts';

describe('csv', () => {
  it('quotes what needs quoting and leaves the rest bare', () => {
    expect(csvRow(['a', 1, null, true])).toBe('a,1,,true\r\n');
    expect(csvRow(['x,y', 'say "hi"', '# Title\n\nbody'])).toBe('"x,y","say ""hi""","# Title\n\nbody"\r\n');
  });
});
