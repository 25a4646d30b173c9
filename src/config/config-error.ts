/**
 * The error a setting that cannot be used stops the start with, and the credentials kept out of it:
 * a message may quote an address given with its user and password.
 */

/** `scheme://user:password@`: an address's credentials, wherever in a text it appears. */
const ADDRESS_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)[^/\s"']*@/gi;

/** `scheme://user:password@host` -> `scheme://[redacted]@host`, wherever an address appears in `text`. */
export function redactCredentials(text: string): string {
  return text.replace(ADDRESS_CREDENTIALS, '$1[redacted]@');
}

/** Whether `text` holds an address with credentials in it, anywhere (a list of addresses too). */
export function holdsCredentials(text: string): boolean {
  return redactCredentials(text) !== text;
}

/** `http://user:password@host`: an address that carries its own credentials. */
export function urlHasCredentials(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/\s]*@/i.test(url);
}

/** A setting that cannot be used; `message` is one line naming the setting, with no credentials in it. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(redactCredentials(message));
    this.name = 'ConfigError';
  }
}
