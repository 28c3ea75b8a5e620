import { Transform, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { ContentEncodingError } from '../errors.ts';

/** What we ask for. zstd is left out: Node 20 cannot decode it. */
export const ACCEPT_ENCODING = 'gzip, deflate, br';

/**
 * A stream of the decoded body for a Content-Encoding list (applied right to left). The caller
 * bounds the decoded size: a 10 KB gzip can inflate to gigabytes, so it must stop reading at the
 * limit rather than trust the compressed length.
 */
export function decodeContent(body: Readable, contentEncoding: string | null): Readable {
  const codings = (contentEncoding ?? '')
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length === 0) return body;
  let out: Readable = body;
  for (const coding of codings.reverse()) {
    const next = decoderFor(coding);
    out.on('error', (err) => next.destroy(err));
    out = out.pipe(next);
  }
  return out;
}

function decoderFor(coding: string): Transform {
  const flush = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip(flush);
    case 'br':
      return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    case 'deflate':
      return new DeflateAuto();
    default:
      throw new ContentEncodingError(`unsupported Content-Encoding: ${coding}`);
  }
}

/**
 * "deflate" is meant to be zlib-wrapped (RFC 9110), but some servers send raw deflate. The first
 * byte tells: a zlib header has compression method 8 in its low nibble.
 */
class DeflateAuto extends Transform {
  private inner: Transform | null = null;

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (!this.inner) {
      const zlibWrapped = (chunk[0]! & 0x0f) === 8;
      const flush = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
      this.inner = zlibWrapped ? zlib.createInflate(flush) : zlib.createInflateRaw(flush);
      this.inner.on('data', (d: Buffer) => this.push(d));
      this.inner.on('error', (err) => this.destroy(err));
    }
    this.inner.write(chunk, cb);
  }

  override _flush(cb: (err?: Error | null) => void): void {
    if (!this.inner) return cb();
    this.inner.once('end', () => cb());
    this.inner.end();
  }

  override _destroy(err: Error | null, cb: (err: Error | null) => void): void {
    this.inner?.destroy();
    cb(err);
  }
}
