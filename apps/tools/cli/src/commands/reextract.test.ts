import { describe, expect, it } from 'vitest';
import { CliError } from '../lib/cli-error.ts';
import { rulesOf } from './reextract.ts';

describe('trawl reextract: the spec file', () => {
  it('takes the rules as an object, or under `spec`', () => {
    const rules = { item_fields: [{ name: 'title', selector: 'h2' }] };
    expect(rulesOf(JSON.stringify(rules), 'f.json')).toEqual(rules);
    expect(rulesOf(JSON.stringify({ spec: rules }), 'f.json')).toEqual(rules);
  });

  it('refuses what is not a JSON object, naming the file', () => {
    expect(() => rulesOf('{', 'f.json')).toThrow(CliError);
    expect(() => rulesOf('[1]', 'f.json')).toThrow(/f\.json must hold a JSON object/);
  });
});
