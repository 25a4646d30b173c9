/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * Live pages: polls the page's small fingerprint endpoint and reloads the page when the fingerprint
 * changes (a new transaction, a confirmation, a cosigner's signature), unless the person is typing
 * in a form, in which case a notice offers the reload. Once a form is sent the page stops following:
 * a reload then would cancel the answer the person waits for (a broadcast the node takes seconds to accept).
 */
const INTERVAL_MS = 3000;

function editing(): boolean {
  const active = document.activeElement;
  if (active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement || active instanceof HTMLSelectElement) return true;
  return [...document.querySelectorAll('textarea')].some((t) => !t.readOnly && t.value !== '');
}

function offerReload(): void {
  if (document.querySelector('[data-live-notice]')) return;
  const notice = document.createElement('p');
  notice.className = 'flash notice';
  notice.setAttribute('role', 'status');
  notice.dataset.liveNotice = '';
  notice.textContent = 'This page has changed. ';
  const button = document.createElement('button');
  button.type = 'button';
  button.textContent = 'Show the changes';
  button.addEventListener('click', () => location.reload());
  notice.append(button);
  document.querySelector('main')?.prepend(notice);
}

/** `shown`: the fingerprint the server read before building the page. */
export function watchLiveChanges(url: string, shown: string): void {
  let leaving = false;
  // Listened to on the document, so a form's own handlers (a confirmation declined) have run first.
  document.addEventListener('submit', (event) => {
    if (!event.defaultPrevented) leaving = true;
  });
  const check = async () => {
    if (leaving) return;
    try {
      const response = await fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' });
      if (leaving) return;
      if (response.status === 401) {
        location.reload(); // the session ended: the page shows the sign-in form
        return;
      }
      if (!response.ok) return;
      const { fingerprint } = (await response.json()) as { fingerprint: string };
      if (fingerprint !== shown) {
        if (editing()) offerReload();
        else location.reload();
        return;
      }
    } catch {
      // Offline for a moment: try again at the next tick.
    }
    setTimeout(check, INTERVAL_MS);
  };
  void check();
}
