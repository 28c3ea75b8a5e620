/**
 * What people read: one line per finished step while `up`/`down` run (stderr), the `status`
 * table (stdout). Pure functions of the reports, shared by this package's CLI and `trawl`. Every
 * endpoint and message goes through the redaction of @trawl/streams on its way out: a part may
 * report a URL with the stack's credentials in it, a terminal must not show them.
 */
import { redactText, redactUrl } from '@trawl/streams';
import type { PartStatus } from './part.ts';
import type { DownStep, UpStep } from './stack.ts';

export interface Style {
  readonly ok: (s: string) => string;
  readonly bad: (s: string) => string;
  readonly dim: (s: string) => string;
}

export const PLAIN: Style = { ok: (s) => s, bad: (s) => s, dim: (s) => s };

/** Colours for a terminal, none when NO_COLOR is set or the stream is not a TTY. */
export function styleFor(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): Style {
  if (!stream.isTTY || env.NO_COLOR) return PLAIN;
  const wrap = (code: number) => (s: string) => `\x1b[${code}m${s}\x1b[0m`;
  return { ok: wrap(32), bad: wrap(31), dim: wrap(2) };
}

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

const PART_WIDTH = 12;
const ENDPOINT_WIDTH = 44;

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((l) => prefix + l)
    .join('\n');
}

/** `✔ kafka       127.0.0.1:9092     (4.1 s)  started, pid 1234: cluster …`, plus why/what on failure. */
export function formatUpStep(s: UpStep, style: Style = PLAIN): string {
  if (s.ok) {
    const { up } = s;
    const what = [up.action, up.pid ? `pid ${up.pid}` : undefined].filter(Boolean).join(', ');
    return `${style.ok('✔')} ${up.part.padEnd(PART_WIDTH)}${redactUrl(up.endpoint).padEnd(ENDPOINT_WIDTH)} ${style.dim(`(${seconds(s.ms)})`)}  ${what}${up.note ? `: ${redactText(up.note)}` : ''}`;
  }
  const e = s.error;
  const lines = [`${style.bad('✖')} ${s.part.padEnd(PART_WIDTH)}${style.bad(redactText(e.message))} ${style.dim(`(${seconds(s.ms)})`)}`];
  if (e.logTail) lines.push(indent(redactText(e.logTail), '    │ '));
  lines.push(`    → ${redactText(e.hint)}`);
  return lines.join('\n');
}

export function formatUpSummary(ok: boolean, ms: number, steps: readonly UpStep[], style: Style = PLAIN): string {
  if (ok) return style.ok(`stack up in ${seconds(ms)}`);
  const failed = steps.filter((s) => !s.ok).map((s) => s.part);
  return style.bad(`stack up FAILED (${seconds(ms)}): ${failed.join(', ')}; see above for why and what to do`);
}

export function formatDownStep(s: DownStep, style: Style = PLAIN): string {
  switch (s.action) {
    case 'stopped':
      return `${style.ok('✔')} ${s.part.padEnd(PART_WIDTH)}stopped pid ${s.pid}${s.killed ? ' (did not stop in time: killed)' : ''} ${style.dim(`(${seconds(s.ms)})`)}`;
    case 'not-ours':
      return `${style.dim('·')} ${s.part.padEnd(PART_WIDTH)}left running: not started by the stack`;
    case 'not-running':
      return `${style.dim('·')} ${s.part.padEnd(PART_WIDTH)}not running`;
  }
}

/** The `status` table: PART, STATE, ENDPOINT, PID, RSS MB, NOTE. */
export function formatStatusTable(parts: readonly PartStatus[], style: Style = PLAIN): string {
  const header = ['PART', 'STATE', 'ENDPOINT', 'PID', 'RSS MB', 'NOTE'];
  const rows = parts.map((p) => [
    p.part,
    p.state + (p.state === 'up' && !p.ours && p.part !== 'chromium' && p.part !== 'topics' ? ' (ext)' : ''),
    redactUrl(p.endpoint),
    p.pid ? String(p.pid) : '-',
    p.rssMb !== undefined ? String(p.rssMb) : '-',
    redactText(p.note ?? ''),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => (i === 3 || i === 4 ? c.padStart(widths[i]!) : i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const colour = (p: PartStatus, text: string): string => (p.state === 'up' ? text : style.bad(text));
  return [line(header), ...rows.map((r, i) => colour(parts[i]!, line(r)))].join('\n');
}
