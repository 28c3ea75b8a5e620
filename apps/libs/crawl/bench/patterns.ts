/**
 * Per-link cost of a website's include/exclude patterns: V8's RegExp (what ran before) and the
 * linear-time engine (re2js, what runs now), side by side on the same links, for typical pattern
 * lists and for hostile ones. Prints a table and one JSON line.
 *
 *   npm run bench:patterns -w @trawl/crawl -- [rounds=20]
 */
import { PatternList } from '../src/rules/user-patterns.ts';

const rounds = Number(process.argv[2] ?? 20);

// Links as the rules see them: normalised, same host, of the shapes crawls meet.
const links = Array.from({ length: 2_000 }, (_, i) => {
  const shapes = [
    `http://127.0.0.1:8090/jobs/${i}`,
    `http://127.0.0.1:8090/jobs?page=${i % 40}`,
    `https://shop.example/category/${i % 97}/product-${i}?colour=blue&size=${i % 7}`,
    `https://news.example/2026/11/${(i % 28) + 1}/a-rather-long-article-slug-about-${i}-things.html`,
    `https://docs.example/files/report-${i}.pdf`,
  ];
  return shapes[i % shapes.length]!;
});

const lists: Record<string, { include: string[]; exclude: string[] }> = {
  'none': { include: [], exclude: [] },
  'demo (/jobs)': { include: ['/jobs'], exclude: [] },
  '1 + 1': { include: ['/jobs'], exclude: ['\\.pdf$'] },
  '5 + 5': {
    include: ['/jobs/\\d+', '/category/\\d+/product-', '^https://news\\.example/\\d{4}/', '[?&]page=\\d+', '/files/'],
    exclude: ['\\.pdf$', '[?&]sessionid=', '/login', '/cart', '\\.(jpg|png|gif)$'],
  },
  '50 + 0': { include: Array.from({ length: 50 }, (_, i) => `/section-${i}/[a-z0-9-]+$`), exclude: [] },
};

type Check = (url: string) => boolean;

function regexpCheck(include: string[], exclude: string[]): Check {
  const inc = include.map((p) => new RegExp(p));
  const exc = exclude.map((p) => new RegExp(p));
  return (u) => (inc.length === 0 || inc.some((r) => r.test(u))) && !exc.some((r) => r.test(u));
}

function re2Check(include: string[], exclude: string[]): Check {
  const inc = PatternList.compile(include);
  const exc = PatternList.compile(exclude);
  return (u) => (inc.size === 0 || inc.test(u)) && !exc.test(u);
}

/** Median nanoseconds per link over `rounds` passes of `urls`, after a warm-up pass. */
function nsPerLink(check: Check, urls: readonly string[]): number {
  let kept = 0;
  for (const u of urls) if (check(u)) kept++;
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t = process.hrtime.bigint();
    for (const u of urls) if (check(u)) kept++;
    samples.push(Number(process.hrtime.bigint() - t) / urls.length);
  }
  if (kept < 0) console.log(kept); // keeps the loop's result alive
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

const rows: { list: string; regexpNs: number; re2Ns: number }[] = [];
for (const [name, { include, exclude }] of Object.entries(lists)) {
  // Alternated, so a change in the machine's load touches both engines alike.
  const a = regexpCheck(include, exclude);
  const b = re2Check(include, exclude);
  const regexpNs = Math.min(nsPerLink(a, links), nsPerLink(a, links));
  const re2Ns = Math.min(nsPerLink(b, links), nsPerLink(b, links));
  rows.push({ list: name, regexpNs, re2Ns });
}

// Hostile lists: where each engine is at its worst.
const ab = (n: number, seed = 1) => Array.from({ length: n }, () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) & 0x10000 ? 'a' : 'b')).join('');
const hostile = {
  // Exponential for backtracking: 24 a's already take about a second in V8.
  catastrophic: { pattern: '^https?://[^/]+/(a+)+$', url: `http://e.com/${'a'.repeat(22)}!` },
  // The DFA gives up, the linear engine pays length × program on every character.
  'dfa-hostile': { pattern: 'a[ab]{200}$', url: `http://e.com/${ab(2_000)}` },
};
const worst: Record<string, { regexpMs: number; re2Ms: number }> = {};
for (const [name, { pattern, url }] of Object.entries(hostile)) {
  const time = (check: Check) => {
    const t = performance.now();
    check(url);
    return performance.now() - t;
  };
  worst[name] = { regexpMs: time(regexpCheck([pattern], [])), re2Ms: time(re2Check([pattern], [])) };
}

const load = (await import('node:os')).loadavg()[0]!.toFixed(2);
console.log(`per-link cost of include/exclude patterns, median of ${rounds} passes over ${links.length} links (load ${load})`);
console.log(`${'list'.padEnd(14)} ${'RegExp ns'.padStart(10)} ${'re2js ns'.padStart(10)} ${'added ns'.padStart(10)}`);
for (const r of rows) console.log(`${r.list.padEnd(14)} ${r.regexpNs.toFixed(0).padStart(10)} ${r.re2Ns.toFixed(0).padStart(10)} ${(r.re2Ns - r.regexpNs).toFixed(0).padStart(10)}`);
for (const [name, w] of Object.entries(worst)) console.log(`${name.padEnd(14)} one link: RegExp ${w.regexpMs.toFixed(1)} ms, re2js ${w.re2Ms.toFixed(1)} ms`);
console.log(JSON.stringify({ bench: 'patterns', load: Number(load), rounds, links: links.length, rows, worst }));
