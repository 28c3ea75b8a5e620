/**
 * Turns body bytes into text the way a browser would pick the encoding: BOM first, then the
 * Content-Type charset, then a `<meta charset>` / `http-equiv` declaration in the first 1024 bytes,
 * else UTF-8 (the WHATWG default would be windows-1252, but undeclared pages today are nearly all
 * UTF-8, and TextDecoder replaces what does not fit instead of failing).
 */
const META_CHARSET = /<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.-]+)/i;
type Decoder = InstanceType<typeof TextDecoder>;
const decoders = new Map<string, Decoder>();

export interface DecodedBody {
  readonly text: string;
  /** The encoding actually used (WHATWG name). */
  readonly charset: string;
}

export function decodeBody(bytes: Uint8Array, headerCharset: string | null): DecodedBody {
  const bom = bomEncoding(bytes);
  const fromMeta = () => {
    const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024)).toString('latin1');
    return META_CHARSET.exec(head)?.[1] ?? null;
  };
  const decoder = (bom && decoderFor(bom)) || (headerCharset && decoderFor(headerCharset)) || metaDecoder(fromMeta()) || decoderFor('utf-8')!;
  return { text: decoder.decode(bytes), charset: decoder.encoding };
}

function metaDecoder(label: string | null): Decoder | null {
  if (!label) return null;
  const d = decoderFor(label);
  // A page cannot really be UTF-16 if its meta tag was readable as ASCII (HTML spec: treat as UTF-8).
  if (d && d.encoding.startsWith('utf-16')) return decoderFor('utf-8');
  return d;
}

function bomEncoding(b: Uint8Array): string | null {
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return 'utf-8';
  if (b[0] === 0xfe && b[1] === 0xff) return 'utf-16be';
  if (b[0] === 0xff && b[1] === 0xfe) return 'utf-16le';
  return null;
}

/** WHATWG labels are at most 19 characters long (`unicode-1-1-utf-8`, `iso-ir-58`…); anything longer is none. */
const MAX_LABEL_LENGTH = 32;

/**
 * One decoder per label, reused: `decode()` without `stream` keeps no state between calls. Only
 * labels the Encoding standard defines are kept (a fixed set of about 220), never the unknown ones
 * a page declares, so the cache cannot grow with what crawled pages say.
 */
function decoderFor(label: string): Decoder | null {
  const key = label.trim().toLowerCase();
  const cached = decoders.get(key);
  if (cached !== undefined) return cached;
  if (key.length > MAX_LABEL_LENGTH) return null;
  try {
    const d = new TextDecoder(key);
    decoders.set(key, d);
    return d;
  } catch {
    return null; // unknown label: fall through to the next source
  }
}

/** Labels with a decoder kept: at most the standard's labels, whatever pages declare. */
export function cachedDecoderCount(): number {
  return decoders.size;
}
