/** Sign-in (same users, password hashing and failed-login limits as the token endpoint) and sign-out. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ServiceError } from '../../services/errors.js';
import { field, respond, sessionOf, type WebDeps } from '../context.js';
import { html } from '../html.js';
import { localPath } from '../local-path.js';
import { SESSION_COOKIE, clearSessionCookie, setSessionCookie } from '../session.js';

/** Only a path of this service may follow a sign-in (no open redirect); anything else goes to the wallets. */
function nextPath(value: unknown): string {
  const path = localPath(value);
  return path !== undefined && !path.startsWith('/sign-') ? path : '/';
}

function signInForm(next: string, userName: string) {
  return html`<section class="narrow">
<h1>Sign in</h1>
<form method="post" action="/sign-in" class="stack">
  <input type="hidden" name="next" value="${next}">
  <label for="user">User name</label>
  <input id="user" name="user" autocomplete="username" required value="${userName}" autofocus>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button type="submit">Sign in</button>
</form>
</section>`;
}

export function registerAuthPages(app: FastifyInstance, deps: WebDeps): void {
  app.get('/sign-in', async (request: FastifyRequest<{ Querystring: { next?: string } }>, reply) => {
    if (request.webSession) return reply.redirect(nextPath(request.query.next), 303);
    return respond(reply, deps, request, { title: 'Sign in', body: signInForm(nextPath(request.query.next), '') });
  });

  app.post('/sign-in', async (request, reply) => {
    const userName = field(request.body, 'user');
    const next = nextPath(field(request.body, 'next'));
    try {
      const { sessionId } = await deps.services.webSessions.signIn(userName, field(request.body, 'password'), request.ip);
      setSessionCookie(request, reply, sessionId);
      return reply.redirect(next, 303);
    } catch (error) {
      if (!(error instanceof ServiceError) || (error.kind !== 'unauthenticated' && error.kind !== 'rate_limited')) throw error;
      const text = error.kind === 'rate_limited' ? error.message : 'Wrong user name or password.';
      if (error.details.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.details.retryAfterSeconds));
      return respond(reply, deps, request, { title: 'Sign in', body: signInForm(next, userName), flash: { kind: 'error', text } }, error.kind === 'rate_limited' ? 429 : 401);
    }
  });

  app.post('/sign-out', async (request, reply) => {
    sessionOf(request);
    const id = request.cookies[SESSION_COOKIE];
    if (id) await deps.services.webSessions.signOut(id);
    clearSessionCookie(request, reply);
    return reply.redirect('/sign-in', 303);
  });
}
