/**
 * Charikar's similarity hash (simhash) of a text, 64 bits as 16 hex digits: texts that differ a
 * little have hashes that differ in a few bits, so "near-duplicate" is "Hamming distance ≤ k"
 * (Manku, Jain and Das Sarma, "Detecting near-duplicates for web crawling", WWW 2007: 64 bits,
 * k = 3 for pages). Features are overlapping 3-word shingles of the lower-cased words, each hashed
 * to 64 bits (its words' FNV-1a hashes under two seeds, mixed in order and finished with murmur3's
 * finaliser, for avalanche); every feature votes on every bit, repeated ones again.
 *
 * Why not simhash-js (the npm package): it makes 32 bits (too few to tell pages apart at scale),
 * cuts the text into fixed 4-character chunks, so one inserted character shifts every chunk after
 * it and changes the hash of an otherwise identical page (a session id in a link's text does), and
 * its "keep the smallest 128 features" step keeps the others. The algorithm is small and well
 * known; this is it, bounded: at most MAX_WORDS words are read. Each word is hashed once and a
 * shingle's hash is its three words' hashes mixed in order, so a page costs one pass over its text
 * and eight counter increments per word.
 */

/** Words of a text read for its hash: past it, the rest of the page does not count. */
export const MAX_WORDS = 20_000;
const SHINGLE = 3;

/** The simhash of `text` (16 lower-case hex digits), or null when it has no word. */
export function simhash(text: string): string | null {
  // Two 32-bit hashes per word (two seeds): 64 bits per shingle once mixed.
  const low: number[] = [];
  const high: number[] = [];
  for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    low.push(fnv1a(m[0], 0x811c9dc5));
    high.push(fnv1a(m[0], 0x5bd1e995));
    if (low.length >= MAX_WORDS) break;
  }
  if (low.length === 0) return null;
  // The votes, counted by byte: how often each value came at each of the 8 byte positions; a bit's
  // votes for 1 are then summed from the values that have it (a constant 16,384 steps), not 64 per shingle.
  const histogram = new Int32Array(8 * 256);
  const count = Math.max(1, low.length - SHINGLE + 1);
  for (let i = 0; i < count; i++) {
    const l = shingleHash(low, i);
    const h = shingleHash(high, i);
    for (let k = 0; k < 4; k++) {
      histogram[(k << 8) | ((l >>> (8 * k)) & 0xff)]!++;
      histogram[((4 + k) << 8) | ((h >>> (8 * k)) & 0xff)]!++;
    }
  }
  const ones = new Int32Array(64);
  for (let position = 0; position < 8; position++) {
    for (let value = 1; value < 256; value++) {
      const n = histogram[(position << 8) | value]!;
      if (n === 0) continue;
      for (let j = 0; j < 8; j++) if ((value >>> j) & 1) ones[position * 8 + j]! += n;
    }
  }
  // A bit is set when more shingles voted for it than against it.
  let lo = 0;
  let hi = 0;
  for (let bit = 0; bit < 32; bit++) {
    if (2 * ones[bit]! > count) lo |= 1 << bit;
    if (2 * ones[32 + bit]! > count) hi |= 1 << bit;
  }
  return hex32(hi) + hex32(lo);
}

/** Bits in which two simhashes differ (0–64). */
export function hammingDistance(a: string, b: string): number {
  return popcount32(parseInt(a.slice(0, 8), 16) ^ parseInt(b.slice(0, 8), 16)) + popcount32(parseInt(a.slice(8, 16), 16) ^ parseInt(b.slice(8, 16), 16));
}

/** A simhash as two 32-bit halves, for comparing many against one without parsing each time. */
export function simhashWords(hash: string): [hi: number, lo: number] {
  return [parseInt(hash.slice(0, 8), 16) | 0, parseInt(hash.slice(8, 16), 16) | 0];
}

export function popcount32(v: number): number {
  v = v - ((v >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

/** The hash of the shingle starting at word `i`: its words' hashes mixed in order (a word missing at the end counts as 0). */
function shingleHash(words: readonly number[], i: number): number {
  let h = 0x9747b28c;
  for (let j = i; j < i + SHINGLE; j++) h = Math.imul(h ^ (words[j] ?? 0), 0x01000193) ^ (h >>> 15);
  return fmix32(h >>> 0);
}

function fnv1a(text: string, seed: number): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** murmur3's 32-bit finaliser: every input bit reaches every output bit. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function hex32(v: number): string {
  return (v >>> 0).toString(16).padStart(8, '0');
}
