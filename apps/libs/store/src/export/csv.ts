/**
 * RFC 4180 CSV, for the API's exports and the CLI's (`trawl export`). Objects are written as
 * JSON. Scraped text is hostile: a cell starting with `=`, `+`, `-`, `@`, tab or CR would
 * run as a formula when the export is opened in a spreadsheet, so such cells get a leading `'`
 * (the OWASP "CSV injection" advice).
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: unknown): string {
  let text = value === null || value === undefined ? '' : value instanceof Date ? value.toISOString() : typeof value === 'object' ? JSON.stringify(value) : String(value);
  if (FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(values: readonly unknown[]): string {
  return values.map(csvCell).join(',') + '\r\n';
}
