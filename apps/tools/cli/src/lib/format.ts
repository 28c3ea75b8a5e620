/** Human-readable figures and safe text for terminal output. */

/** Control characters a terminal acts on (C0 but tab/newline/return, DEL, C1) and bidirectional overrides that reorder what is shown. */
// eslint-disable-next-line no-control-regex -- control characters are matched on purpose: they are removed
const CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
/** Line breaks: one log line stays one line, so crawled text cannot forge the lines after it. */
const BREAKS = /[\t\n\r\u2028\u2029]/g;

/**
 * Text from outside the CLI (crawled pages, URLs, error messages, anything the API relays) made
 * safe to print: escape sequences could otherwise retitle the terminal, hide or rewrite lines, or
 * write to the clipboard. Control characters are removed, breaks become spaces.
 */
export function printable(text: string): string {
  return text.replace(CONTROLS, '').replace(BREAKS, ' ');
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s - m * 60)} s`;
}

/** Columns padded to their widest cell. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length))) ?? [];
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')).join('\n');
}

export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  green(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
}

const PLAIN: Style = { bold: (s) => s, dim: (s) => s, green: (s) => s, red: (s) => s, yellow: (s) => s };
const wrap = (open: number, close: number) => (s: string) => `\x1b[${open}m${s}\x1b[${close}m`;
const ANSI: Style = { bold: wrap(1, 22), dim: wrap(2, 22), green: wrap(32, 39), red: wrap(31, 39), yellow: wrap(33, 39) };

/** Colours only on a terminal, and never with NO_COLOR. */
export function styleFor(stream: NodeJS.WriteStream): Style {
  return stream.isTTY && !process.env.NO_COLOR ? ANSI : PLAIN;
}
