/** Plain-text tables for the terminal: figures first, JSON for machines goes to a file. */

export function table(headers: readonly string[], rows: readonly (readonly (string | number | null | undefined)[])[]): string {
  const cells = [headers, ...rows.map((r) => r.map(show))];
  const widths = headers.map((_, c) => Math.max(...cells.map((r) => (r[c] ?? '').length)));
  const line = (r: readonly string[]) => r.map((v, c) => (c === 0 ? v.padEnd(widths[c]!) : v.padStart(widths[c]!))).join('  ');
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

function show(v: string | number | null | undefined): string {
  if (v === null || v === undefined || (typeof v === 'number' && !Number.isFinite(v))) return '–';
  return String(v);
}

export function say(text = ''): void {
  process.stdout.write(text + '\n');
}

/** Progress lines go to stderr so that stdout holds the figures alone. */
export function progress(text: string): void {
  process.stderr.write(`  · ${text}\n`);
}
