/**
 * A browser-like client of the web interface for HTTP-level tests: keeps the session cookie, reads
 * the form token from the pages, follows no redirects (tests look at them), sends same-origin forms.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** Builds the interface's script and stylesheet once (the server serves them from dist/web/assets). */
export function ensureWebAssets(): void {
  if (existsSync(join(ROOT, 'dist', 'web', 'assets', 'app.js')) && process.env.WEB_ASSETS_FRESH === '1') return;
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-web.mjs')], { stdio: 'inherit' });
  process.env.WEB_ASSETS_FRESH = '1';
}

export interface WebResponse {
  status: number;
  headers: Headers;
  text: string;
  location: string | null;
}

export interface WebClientOptions {
  /** Headers sent with every request (what a reverse proxy adds). */
  headers?: Record<string, string>;
  /** The origin of the pages the forms are posted from; default: the origin of `base`. */
  origin?: string;
}

export class WebClient {
  cookie: string | undefined;
  constructor(
    readonly base: string,
    private readonly options: WebClientOptions = {},
  ) {}

  async get(path: string): Promise<WebResponse> {
    return this.send(path, { method: 'GET' });
  }

  /** A form post from a page of the service (Origin of the service), with the form token unless given. */
  async post(path: string, fields: Record<string, string | string[]>, options: { origin?: string; csrf?: string | null } = {}): Promise<WebResponse> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(fields)) for (const v of [value].flat()) body.append(name, v);
    if (options.csrf !== null && !('_csrf' in fields)) body.append('_csrf', options.csrf ?? (await this.formToken()));
    return this.send(path, {
      method: 'POST',
      body: body.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: options.origin ?? this.options.origin ?? new URL(this.base).origin },
    });
  }

  async signIn(user: string, password: string): Promise<WebResponse> {
    return this.post('/sign-in', { user, password }, { csrf: null });
  }

  /** The form token on the wallet list page of the signed-in user. */
  async formToken(): Promise<string> {
    const page = await this.get('/account');
    const match = /name="_csrf" value="([^"]+)"/.exec(page.text);
    if (!match) throw new Error(`no form token on the page (status ${page.status})`);
    return match[1]!;
  }

  private async send(path: string, init: RequestInit): Promise<WebResponse> {
    const headers = new Headers({ ...this.options.headers, ...(init.headers as Record<string, string> | undefined) });
    if (this.cookie) headers.set('cookie', this.cookie);
    const response = await fetch(`${this.base}${path}`, { ...init, headers, redirect: 'manual' });
    const set = response.headers.getSetCookie();
    for (const line of set) {
      const [pair = ''] = line.split(';');
      if (pair.startsWith('wcs_session=')) this.cookie = /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(line) || pair === 'wcs_session=' ? undefined : pair;
    }
    return { status: response.status, headers: response.headers, text: await response.text(), location: response.headers.get('location') };
  }
}
