/**
 * Administration (admins): users (add, reset password, admin flag, delete with the same rule as the
 * command line) and the service's state. The account page lists and revokes the user's own API tokens
 * (tokens are created only at the token endpoint).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { requireAdmin, type DeleteUserWallets } from '../../services/users.js';
import { field, respond, sessionOf, type WebDeps } from '../context.js';
import { html } from '../html.js';
import { csrfField } from '../layout.js';

type UserRequest = FastifyRequest<{ Params: { name: string } }>;

/**
 * What the administration page may confirm after an action, by key: a link cannot make the page say
 * anything else (an unknown key shows nothing).
 */
const NOTICES = {
  user_added: 'The user was added.',
  password_set: 'The new password was set; every session of that user has ended.',
  user_deleted: 'The user was deleted.',
} as const;
type NoticeKey = keyof typeof NOTICES;

const noticeOf = (key: unknown): string | undefined => (typeof key === 'string' && Object.hasOwn(NOTICES, key) ? NOTICES[key as NoticeKey] : undefined);
const adminWithNotice = (key: NoticeKey) => `/admin?done=${key}`;

export function registerAdminPages(app: FastifyInstance, deps: WebDeps): void {
  const { services } = deps;

  app.get('/admin', async (request: FastifyRequest<{ Querystring: { done?: string } }>, reply) => {
    const session = sessionOf(request);
    requireAdmin(session.principal);
    const users = await services.users.listUsers();
    const details = await services.serviceDetails.details(session.principal);
    const chain = details.chain;
    const rows = users.map(
      (u) => html`<tr><td>${u.name}${u.isAdmin ? html` <span class="badge">admin</span>` : ''}</td><td>
<form method="post" action="/admin/users/${encodeURIComponent(u.name)}/password" class="inline-edit">${csrfField(session)}
  <input type="password" name="password" aria-label="New password for ${u.name}" autocomplete="new-password" required><button type="submit" class="small">Set password</button></form>
<form method="post" action="/admin/users/${encodeURIComponent(u.name)}/admin" class="inline">${csrfField(session)}
  <input type="hidden" name="admin" value="${u.isAdmin ? 'false' : 'true'}"><button type="submit" class="small secondary">${u.isAdmin ? 'Remove admin' : 'Make admin'}</button></form>
<form method="post" action="/admin/users/${encodeURIComponent(u.name)}/delete" class="inline-edit" data-confirm="Delete the user ${u.name}?">${csrfField(session)}
  <label class="visually-hidden" for="wallets-${u.name}">Their wallets</label>
  <select id="wallets-${u.name}" name="wallets"><option value="refuse">Refuse if they own wallets</option><option value="delete">Delete their wallets too</option></select>
  <button type="submit" class="small danger">Delete</button></form></td></tr>`,
    );
    const notice = noticeOf(request.query.done);
    const body = html`<h1>Administration</h1>
${notice ? html`<p class="flash notice" role="status">${notice}</p>` : ''}
<section><h2>Service</h2><dl class="facts">
  <div><dt>Version</dt><dd>${details.version}</dd></div>
  <div><dt>Network</dt><dd>${details.network}</dd></div>
  <div><dt>Node</dt><dd>${chain ? `${chain.backend} (${chain.network ?? 'unknown network'})` : 'none'}</dd></div>
  <div><dt>Tip</dt><dd>${chain?.tip_height ?? '—'}</dd></div>
  <div><dt>Sync</dt><dd>${chain?.sync_state ?? '—'}</dd></div>
</dl></section>
<section><h2>Users</h2>
<table class="list"><thead><tr><th scope="col">User</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table>
<h3>Add a user</h3>
<form method="post" action="/admin/users" class="stack">${csrfField(session)}
  <label for="new-user">User name</label><input id="new-user" name="name" required autocomplete="off">
  <label for="new-password">Password</label><input id="new-password" name="password" type="password" required autocomplete="new-password">
  <label class="check"><input type="checkbox" name="admin"> Admin</label>
  <button type="submit">Add the user</button>
</form></section>`;
    return respond(reply, deps, request, { title: 'Administration', body });
  });

  app.post('/admin/users', async (request, reply) => {
    const session = sessionOf(request);
    requireAdmin(session.principal);
    await services.users.addUser(field(request.body, 'name'), field(request.body, 'password'), { admin: field(request.body, 'admin') === 'on' });
    return reply.redirect(adminWithNotice('user_added'), 303);
  });

  app.post('/admin/users/:name/password', async (request: UserRequest, reply) => {
    const session = sessionOf(request);
    requireAdmin(session.principal);
    await services.users.changePassword(request.params.name, field(request.body, 'password'));
    // A new password ends every session of the user, this one too when it is the admin's own.
    return reply.redirect(adminWithNotice('password_set'), 303);
  });

  app.post('/admin/users/:name/admin', async (request: UserRequest, reply) => {
    const session = sessionOf(request);
    requireAdmin(session.principal);
    await services.users.setAdmin(request.params.name, field(request.body, 'admin') === 'true');
    return reply.redirect('/admin', 303);
  });

  app.post('/admin/users/:name/delete', async (request: UserRequest, reply) => {
    const session = sessionOf(request);
    requireAdmin(session.principal);
    const choice = field(request.body, 'wallets');
    const wallets: DeleteUserWallets = choice === 'delete' ? { action: 'delete' } : { action: 'refuse' };
    await services.users.deleteUser(request.params.name, { wallets });
    return reply.redirect(adminWithNotice('user_deleted'), 303);
  });

  app.get('/account', async (request, reply) => {
    const session = sessionOf(request);
    const tokens = await services.tokens.listTokens(session.principal);
    const rows = tokens.map(
      (t) => html`<tr><td>${t.description}</td><td>${t.expiryStatus === 'Valid' ? `${Math.ceil(t.remainingSeconds / 86_400)} days left` : 'expired'}</td><td>
<form method="post" action="/account/tokens/${encodeURIComponent(t.id)}/delete" class="inline">${csrfField(session)}<button type="submit" class="small danger">Revoke</button></form></td></tr>`,
    );
    const body = html`<h1>Account: ${session.principal.userName}</h1>
<section><h2>API tokens</h2>
${tokens.length === 0 ? html`<p class="empty">No API tokens. Programs get one from the token endpoint (<code>POST /api/v1alpha/token</code>).</p>` : html`<table class="list"><thead><tr><th scope="col">Description</th><th scope="col">Expiry</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>${rows}</tbody></table>`}
</section>`;
    return respond(reply, deps, request, { title: 'Account', body });
  });

  app.post('/account/tokens/:id/delete', async (request: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const session = sessionOf(request);
    await services.tokens.deleteToken(session.principal, request.params.id);
    return reply.redirect('/account', 303);
  });
}

