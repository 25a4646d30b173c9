/**
 * Administration (admins): users (add, reset password, admin flag, delete with the same rule as the
 * command line) and the service's state. The account page lists and revokes the user's own API tokens
 * (tokens are created only at the token endpoint).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ServiceError } from '../../services/errors.js';
import type { Principal } from '../../services/principal.js';
import type { PublicConfig } from '../../services/service-details.js';
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

const daysLeft = (seconds: number) => {
  const days = Math.ceil(seconds / 86_400);
  return `${days} day${days === 1 ? '' : 's'} left`;
};

/** A refused administration form: which one (the add form, or a user's row), its message, what was typed. */
interface AdminRefusal {
  form: 'add' | 'row';
  user?: string;
  message: string;
  name?: string;
  admin?: boolean;
}

/** Refusals a person can act on are shown on the form they came from; others go to the error page. */
/** The chain source as an operator calls it, and where it is (no credentials: the service details hold none). */
const chainSourceName = (backend: string) => (backend === 'bitcoind' ? 'Bitcoin Core' : backend === 'electrum' ? 'Electrum server' : backend);
const chainSourceAddress = (config: PublicConfig) => config.electrum_url ?? config.bitcoind_url;

const shownOnTheForm = (error: unknown): error is ServiceError =>
  error instanceof ServiceError && (error.kind === 'invalid_input' || error.kind === 'conflict' || error.kind === 'not_found');

export function registerAdminPages(app: FastifyInstance, deps: WebDeps): void {
  const { services } = deps;

  async function renderAdmin(request: FastifyRequest, reply: FastifyReply, principal: Principal, done: unknown, refusal?: AdminRefusal, status = 200): Promise<FastifyReply> {
    const session = sessionOf(request);
    requireAdmin(principal);
    const users = await services.users.listUsers();
    const admins = users.filter((u) => u.isAdmin).length;
    const rowError = (name: string) =>
      refusal?.form === 'row' && refusal.user === name ? html`<p class="field-error" id="user-error-${name}" role="alert">${refusal.message}</p>` : '';
    const details = await services.serviceDetails.details(session.principal);
    const chain = details.chain;
    const rows = users.map(
      (u) => html`<tr id="user-${u.name}"><td>${u.name}${u.isAdmin ? html` <span class="badge">admin</span>` : ''}</td><td>
${rowError(u.name)}
<form method="post" action="/admin/users/${encodeURIComponent(u.name)}/password" class="inline-edit">${csrfField(session)}
  <label for="password-${u.name}">New password</label>
  <input id="password-${u.name}" type="password" name="password" autocomplete="new-password" required><button type="submit" class="small">Set password</button></form>
${u.isAdmin && admins <= 1
  ? html`<span class="muted">The only admin</span>`
  : html`<form method="post" action="/admin/users/${encodeURIComponent(u.name)}/admin" class="inline">${csrfField(session)}
  <input type="hidden" name="admin" value="${u.isAdmin ? 'false' : 'true'}"><button type="submit" class="small secondary">${u.isAdmin ? 'Remove admin' : 'Make admin'}</button></form>`}
<form method="post" action="/admin/users/${encodeURIComponent(u.name)}/delete" class="inline-edit" data-confirm="Delete the user ${u.name}?">${csrfField(session)}
  <label class="visually-hidden" for="wallets-${u.name}">Their wallets</label>
  <select id="wallets-${u.name}" name="wallets"><option value="refuse">Refuse if they own wallets</option><option value="delete">Delete their wallets too</option></select>
  <button type="submit" class="small danger">Delete</button></form></td></tr>`,
    );
    const notice = refusal ? undefined : noticeOf(done);
    const addError = refusal?.form === 'add' ? html`<p class="field-error" id="add-user-error" role="alert">${refusal.message}</p>` : '';
    const body = html`<h1>Administration</h1>
${notice ? html`<p class="flash notice" role="status">${notice}</p>` : ''}
<section><h2>Service</h2><dl class="facts">
  <div><dt>Version</dt><dd>${details.version}</dd></div>
  <div><dt>Network</dt><dd>${details.network}</dd></div>
  <div><dt>Chain source</dt><dd>${chain ? `${chainSourceName(chain.backend)}${chainSourceAddress(details.config) ? ` at ${chainSourceAddress(details.config)}` : ''} (${chain.network ?? 'unknown network'})` : 'none'}</dd></div>
  <div><dt>Tip</dt><dd>${chain?.tip_height ?? '—'}</dd></div>
  <div><dt>Sync</dt><dd>${chain?.sync_state ?? '—'}</dd></div>
</dl></section>
<section><h2>Users</h2>
<table class="list"><thead><tr><th scope="col">User</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table>
<h3>Add a user</h3>
<form method="post" action="/admin/users" class="stack" id="add-user">${csrfField(session)}
  ${addError}
  <label for="new-user">User name</label><input id="new-user" name="name" required autocomplete="off" value="${refusal?.form === 'add' ? (refusal.name ?? '') : ''}">
  <label for="new-password">Password</label><input id="new-password" name="password" type="password" required autocomplete="new-password">
  <label class="check"><input type="checkbox" name="admin"${refusal?.form === 'add' && refusal.admin ? html` checked` : ''}> Admin</label>
  <button type="submit">Add the user</button>
</form></section>`;
    const flash = refusal ? { kind: 'error' as const, text: refusal.message } : undefined;
    return respond(reply, deps, request, { title: 'Administration', body, flash }, status);
  }

  /** Runs an administration action; a refusal is shown on the same page, next to its form, with what was typed. */
  async function act(request: FastifyRequest, reply: FastifyReply, refusalOf: (message: string) => AdminRefusal, action: () => Promise<string>) {
    const session = sessionOf(request);
    requireAdmin(session.principal);
    try {
      return reply.redirect(await action(), 303);
    } catch (error) {
      if (!shownOnTheForm(error)) throw error;
      const refusal = refusalOf(error.message);
      const status = error.kind === 'conflict' ? 409 : error.kind === 'not_found' ? 404 : 400;
      return renderAdmin(request, reply, session.principal, undefined, refusal, status);
    }
  }

  app.get('/admin', async (request: FastifyRequest<{ Querystring: { done?: string } }>, reply) => renderAdmin(request, reply, sessionOf(request).principal, request.query.done));

  app.post('/admin/users', async (request, reply) => {
    const name = field(request.body, 'name');
    const admin = field(request.body, 'admin') === 'on';
    return act(request, reply, (message) => ({ form: 'add', message, name, admin }), async () => {
      await services.users.addUser(name, field(request.body, 'password'), { admin });
      return adminWithNotice('user_added');
    });
  });

  app.post('/admin/users/:name/password', async (request: UserRequest, reply) => {
    const user = request.params.name;
    return act(request, reply, (message) => ({ form: 'row', user, message }), async () => {
      await services.users.changePassword(user, field(request.body, 'password'));
      // A new password ends every session of the user, this one too when it is the admin's own.
      return adminWithNotice('password_set');
    });
  });

  app.post('/admin/users/:name/admin', async (request: UserRequest, reply) => {
    const user = request.params.name;
    return act(request, reply, (message) => ({ form: 'row', user, message }), async () => {
      await services.users.setAdmin(user, field(request.body, 'admin') === 'true');
      return '/admin';
    });
  });

  app.post('/admin/users/:name/delete', async (request: UserRequest, reply) => {
    const user = request.params.name;
    const choice = field(request.body, 'wallets');
    const wallets: DeleteUserWallets = choice === 'delete' ? { action: 'delete' } : { action: 'refuse' };
    return act(request, reply, (message) => ({ form: 'row', user, message }), async () => {
      await services.users.deleteUser(user, { wallets });
      return adminWithNotice('user_deleted');
    });
  });

  app.get('/account', async (request, reply) => {
    const session = sessionOf(request);
    const tokens = await services.tokens.listTokens(session.principal);
    const rows = tokens.map(
      (t) => html`<tr><td>${t.description}</td><td>${t.expiryStatus === 'Valid' ? daysLeft(t.remainingSeconds) : 'expired'}</td><td>
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

