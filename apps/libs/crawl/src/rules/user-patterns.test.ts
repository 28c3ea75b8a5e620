import { describe, expect, it } from 'vitest';
import { measureCpu } from '../testing/cpu-time.ts';
import { InvalidSpecError } from '../errors.ts';
import { compileRules } from './crawl-rules.ts';
import { testSpec } from './test-spec.ts';
import { unsupportedConstruct, MAX_PATTERN_PROGRAM, PatternError, PatternList, patternProblem } from './user-patterns.ts';

describe('PatternList: users’ patterns in a linear-time engine', () => {
  it('answers as RegExp#test does for ordinary patterns', () => {
    const patterns = ['/jobs', '\\.pdf$', '^https?://[^/]+/(products|category)/[0-9]+', '[?&]sessionid=', '(?<kind>jobs|news)/\\d{4}'];
    const urls = ['http://e.com/jobs/1', 'http://e.com/a.pdf', 'https://shop.e.com/category/12', 'http://e.com/?x=1&sessionid=9', 'http://e.com/news/2026', 'http://e.com/about'];
    for (const p of patterns) {
      const list = PatternList.compile([p]);
      for (const u of urls) expect(list.test(u), `${p} on ${u}`).toBe(new RegExp(p).test(u));
    }
  });

  it('tests a list as RegExp#test on each pattern would, also when two patterns name a group alike', () => {
    const urls = ['http://e.com/jobs/1', 'http://e.com/a.pdf', 'http://e.com/news/2026', 'http://e.com/about', 'http://e.com/x?page=2'];
    for (const patterns of [['/jobs/\\d+$', '\\.pdf$', '^http://e\\.com/news/'], ['(?<y>\\d{4})$', '(?<y>page)=\\d']]) {
      const list = PatternList.compile(patterns);
      expect(list.size).toBe(patterns.length);
      for (const u of urls) expect(list.test(u), `${patterns.join(' | ')} on ${u}`).toBe(patterns.some((p) => new RegExp(p).test(u)));
    }
  });

  it('translates JavaScript spellings RE2 lacks, so they keep their meaning', () => {
    expect(PatternList.compile(['caf\\u00e9']).test('http://e.com/café')).toBe(true);
    expect(PatternList.compile(['x[^]y']).test('http://e.com/x/y')).toBe(true);
    expect(PatternList.compile(['\\/jobs\\/']).test('http://e.com/jobs/1')).toBe(true);
  });

  it('names the construct that needs backtracking', () => {
    expect(patternProblem('(a)\\1')).toMatchObject({ kind: 'unsupported', construct: 'a backreference (\\1)' });
    expect(patternProblem('(?<x>a)\\k<x>')).toMatchObject({ kind: 'unsupported', construct: 'a named backreference (\\k<name>)' });
    expect(patternProblem('/jobs(?=/)')).toMatchObject({ kind: 'unsupported', construct: 'a lookahead ((?=…))' });
    expect(patternProblem('/jobs(?!/old)')).toMatchObject({ kind: 'unsupported', construct: 'a negative lookahead ((?!…))' });
    expect(patternProblem('(?<=/)jobs')).toMatchObject({ kind: 'unsupported', construct: 'a lookbehind ((?<=…))' });
    expect(patternProblem('(?<!x)jobs')).toMatchObject({ kind: 'unsupported', construct: 'a negative lookbehind ((?<!…))' });
    expect(patternProblem('(?<!x)jobs')!.message).toMatch(/linear-time engine/);
    expect(patternProblem('\\a\\.html')).toMatchObject({ kind: 'unsupported', construct: 'the escape \\a, which RE2 reads differently' });
    expect(patternProblem('[\\pL]')).toMatchObject({ kind: 'unsupported', construct: 'the escape \\p, which RE2 reads differently' });
    // Escaped or inside a class, the same characters are ordinary.
    expect(unsupportedConstruct('[(?=]\\(?=x')).toBeNull();
    expect(unsupportedConstruct('[\\1]')).toBeNull();
  });

  it('tells a pattern that is no regular expression from one RE2 does not run', () => {
    expect(patternProblem('(unclosed')).toMatchObject({ kind: 'invalid', construct: 'syntax' });
    expect(patternProblem('^https?://[^/]+/(a+)+$')).toBeNull();
    // JavaScript has no inline flags: what `new RegExp` refused stays refused.
    expect(patternProblem('(?i)JOBS')).toMatchObject({ kind: 'invalid' });
  });

  it('caps the program a list compiles to, naming the pattern that passes it', () => {
    expect(PatternList.compile(['[a-z]{1000}', '[a-z]{1000}', '[a-z]{1000}']).programSize).toBeLessThanOrEqual(MAX_PATTERN_PROGRAM);
    const tooMany = ['/ok', '[a-z]{1000}', '[a-z]{1000}', '[a-z]{1000}', '[a-z]{1000}'];
    expect(() => PatternList.compile(tooMany)).toThrow(PatternError);
    try {
      PatternList.compile(tooMany);
    } catch (err) {
      expect((err as PatternError).index).toBe(4);
      expect((err as PatternError).problem).toMatchObject({ kind: 'unsupported', construct: 'too large a program' });
    }
  });

  it('refuses an unsupported pattern when a job’s rules are compiled, naming the field and the construct', () => {
    expect(() => compileRules(testSpec({ include_patterns: ['/jobs', '/(a)\\1'] }))).toThrow(InvalidSpecError);
    expect(() => compileRules(testSpec({ include_patterns: ['/jobs', '/(a)\\1'] }))).toThrow(/include_patterns\[1\] .*a backreference/);
  });

  it('^https?://[^/]+/(a+)+$ against /aaaa…a! answers at once (V8’s engine runs for hours)', () => {
    const rules = compileRules(testSpec({ include_patterns: ['^https?://[^/]+/(a+)+$'] }));
    const { value: verdict, cpuMs } = measureCpu(() => rules.checkPatterns(`http://e.com/${'a'.repeat(40)}!`));
    expect(verdict).toBe('not_included');
    expect(cpuMs).toBeLessThan(100);
  });
});
