/**
 * What Readability's DOM costs per page: linkedom and jsdom parsing the same ~100 KB article page,
 * alone and with Readability over it. Prints ms per page (median of the runs) and as JSON.
 * `npm run bench:dom -w @trawl/content [-- runs]`. jsdom is a dev dependency of this package for
 * this comparison alone: the worker derives formats with linkedom.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';

const runs = Number(process.argv[2] ?? 40);
const para = 'The harbour master keeps a log of every ship that enters and leaves the port, with its cargo. ';
const nav = Array.from({ length: 150 }, (_, i) => `<li><a href="/section/${i}">Section ${i}</a></li>`).join('');
const body = Array.from({ length: 100 }, (_, i) => `<h2>Part ${i}</h2><p>${para.repeat(10)}</p>`).join('');
const html = `<!doctype html><html><head><title>Harbour</title></head><body><nav><ul>${nav}</ul></nav><article>${body}</article><footer>Copyright</footer></body></html>`;

type Parse = (html: string) => Document;
const parsers: [string, Parse][] = [['linkedom', (h) => parseHTML(h).document as unknown as Document]];
try {
  const { JSDOM } = await import('jsdom');
  parsers.push(['jsdom', (h) => new JSDOM(h).window.document]);
} catch {
  console.log('jsdom is not installed: measured linkedom alone');
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const out: Record<string, { parse_ms: number; parse_and_readability_ms: number }> = {};
for (const [name, parse] of parsers) {
  for (let i = 0; i < 5; i++) new Readability(parse(html)).parse();
  const parseOnly: number[] = [];
  const withReadability: number[] = [];
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    parse(html);
    parseOnly.push(performance.now() - t);
    t = performance.now();
    new Readability(parse(html)).parse();
    withReadability.push(performance.now() - t);
  }
  out[name] = { parse_ms: +median(parseOnly).toFixed(2), parse_and_readability_ms: +median(withReadability).toFixed(2) };
  console.log(`${name}: parse ${out[name].parse_ms} ms, parse + Readability ${out[name].parse_and_readability_ms} ms (page ${(html.length / 1024).toFixed(0)} KiB, median of ${runs})`);
}
console.log(JSON.stringify({ page_bytes: html.length, ...out }));
