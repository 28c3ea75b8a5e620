/**
 * Hrefs that never lead to a fetchable page. Checked on the raw attribute before any URL parsing,
 * because pages are full of them and parsing is the expensive part.
 */
const NON_FETCHABLE = /^\s*(?:mailto|javascript|tel|sms|data|blob|about|file|ftp|vbscript|callto|skype|whatsapp|geo|intent):/i;

export function isNonFetchableHref(href: string): boolean {
  if (href === '' || href.startsWith('#')) return true;
  return NON_FETCHABLE.test(href);
}
