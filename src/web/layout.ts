/** The page shell every page shares: head with the service's own assets, navigation, sign-out form. */
import type { WebSession } from '../services/web-sessions.js';
import type { WebAssets } from './assets.js';
import { html, type Html } from './html.js';

export interface PageShell {
  title: string;
  session: WebSession | undefined;
  assets: WebAssets;
  body: Html;
  /**
   * A small JSON endpoint whose `fingerprint` changes when the page would show something new, and the
   * fingerprint read before the page's data: a change made while the page was built still shows.
   */
  live?: { url: string; fingerprint: string } | undefined;
  /** Field errors or a notice shown above the content. */
  flash?: { kind: 'error' | 'notice'; text: string } | undefined;
}

export function csrfField(session: WebSession): Html {
  return html`<input type="hidden" name="_csrf" value="${session.csrfToken}">`;
}

export function page(shell: PageShell): Html {
  const { session } = shell;
  const nav = session
    ? html`<nav aria-label="Main">
        <a href="/">Wallets</a>
        <a href="/account">Account</a>
        ${session.principal.isAdmin ? html`<a href="/admin">Administration</a>` : ''}
        <form method="post" action="/sign-out" class="inline">${csrfField(session)}<button type="submit" class="link">Sign out ${session.principal.userName}</button></form>
      </nav>`
    : '';
  const flash = shell.flash ? html`<p class="flash ${shell.flash.kind}" role="${shell.flash.kind === 'error' ? 'alert' : 'status'}">${shell.flash.text}</p>` : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${shell.title} · Wallet coordination</title>
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
<link rel="stylesheet" href="${shell.assets.urls['style.css']}">
<script type="module" src="${shell.assets.urls['app.js']}"></script>
</head>
<body${shell.live ? html` data-live-url="${shell.live.url}" data-live-fingerprint="${shell.live.fingerprint}"` : ''}>
<header><a class="brand" href="/">Wallet coordination</a>${nav}</header>
<main>
${flash}
${shell.body}
</main>
</body>
</html>`;
}

/** A list of field errors from a refusal, for a form. */
export function fieldErrorMap(errors: readonly { path: string; message: string }[] | undefined): Map<string, string> {
  const map = new Map<string, string>();
  for (const e of errors ?? []) if (!map.has(e.path)) map.set(e.path, e.message);
  return map;
}

export function fieldError(errors: Map<string, string>, path: string, id: string): Html {
  const message = errors.get(path);
  return message === undefined ? html`` : html`<span class="field-error" id="${id}-error">${message}</span>`;
}
