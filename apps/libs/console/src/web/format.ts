/** Numbers, sizes, times and durations as people read them. */

const nf = new Intl.NumberFormat('en');
const compact = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

export function count(n: number | null | undefined): string {
  return n === null || n === undefined ? '–' : nf.format(n);
}

export function short(n: number | null | undefined): string {
  return n === null || n === undefined ? '–' : Math.abs(n) < 10_000 ? nf.format(Math.round(n * 10) / 10) : compact.format(n);
}

export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (Math.abs(v) >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

export function ms(n: number | null | undefined): string {
  if (n === null || n === undefined) return '–';
  return n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(n < 10_000 ? 2 : 1)} s`;
}

export function duration(msTotal: number | null | undefined): string {
  if (msTotal === null || msTotal === undefined) return '–';
  const s = Math.round(msTotal / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const hrs = Math.floor(m / 60);
  return hrs < 48 ? `${hrs}h ${m % 60}m` : `${Math.floor(hrs / 24)}d ${hrs % 24}h`;
}

export function time(iso: string | number | null | undefined): string {
  if (iso === null || iso === undefined) return '–';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? '–' : d.toLocaleString();
}

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '–';
  const diff = now - new Date(iso).getTime();
  if (diff < 0) return `in ${duration(-diff)}`;
  if (diff < 5000) return 'just now';
  return `${duration(diff)} ago`;
}

export function percent(x: number): string {
  return `${Math.round(x)}%`;
}

export function shortId(id: string | null | undefined): string {
  return id ? id.slice(0, 8) : '–';
}
