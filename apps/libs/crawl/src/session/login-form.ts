/**
 * A login form, read from the login page (cheerio): where it posts, and the fields it sends on its
 * own — hidden inputs above all, the CSRF token a site ties to the cookie it set with the page —
 * over which the spec's credentials are filled. Pure: the request side is form-login.ts.
 *
 * The form is the one `form_selector` names, else the first form with a password input, else the
 * page's only form. Without one the login fails, saying so.
 */
import { load } from 'cheerio/slim';
import { LoginFailedError } from '../errors.ts';

export interface LoginForm {
  /** Absolute URL the form posts to (its `action` against the page's final URL; none: the page itself). */
  readonly action: string;
  /** `post` unless the form says `get`. */
  readonly method: 'get' | 'post';
  /** The form's own fields, in order: hidden inputs (CSRF tokens), checked boxes, text inputs' default values. */
  readonly fields: readonly (readonly [string, string])[];
}

/** The login form of `html` (the page at `pageUrl`); LoginFailedError when there is none. */
export function findLoginForm(html: string, pageUrl: string, formSelector: string | null): LoginForm {
  const $ = load(html);
  const forms = $(formSelector ?? 'form').toArray();
  const form = formSelector ? forms[0] : (forms.find((f) => $(f).find('input[type=password]').length > 0) ?? (forms.length === 1 ? forms[0] : undefined));
  if (!form) throw new LoginFailedError(formSelector ? `the login page has no form matching ${formSelector}` : 'the login page has no form with a password field');
  const $form = $(form);
  const rawAction = $form.attr('action')?.trim();
  let action: string;
  try {
    action = new URL(rawAction || pageUrl, pageUrl).href;
  } catch {
    throw new LoginFailedError('the login form posts to an address that is not a URL');
  }
  const fields: [string, string][] = [];
  $form.find('input, select, textarea').each((_, el) => {
    const $el = $(el);
    const name = $el.attr('name');
    if (!name || $el.attr('disabled') !== undefined) return;
    const type = ($el.attr('type') ?? 'text').toLowerCase();
    if (type === 'submit' || type === 'button' || type === 'image' || type === 'reset' || type === 'file') return;
    if ((type === 'checkbox' || type === 'radio') && $el.attr('checked') === undefined) return;
    if (el.tagName === 'select') {
      const selected = $el.find('option[selected]').first();
      const option = selected.length ? selected : $el.find('option').first();
      fields.push([name, option.attr('value') ?? option.text()]);
      return;
    }
    fields.push([name, el.tagName === 'textarea' ? $el.text() : ($el.attr('value') ?? (type === 'checkbox' || type === 'radio' ? 'on' : ''))]);
  });
  const method = ($form.attr('method') ?? 'post').toLowerCase() === 'get' ? 'get' : 'post';
  return { action, method, fields };
}

/** The form's fields with the credentials filled in (a credential replaces the form's field of its name, or is added): `application/x-www-form-urlencoded`. */
export function formBody(form: LoginForm, credentials: Readonly<Record<string, string>>): string {
  const body = new URLSearchParams();
  for (const [name, value] of form.fields) if (!Object.hasOwn(credentials, name)) body.append(name, value);
  for (const [name, value] of Object.entries(credentials)) body.append(name, value);
  return body.toString();
}
