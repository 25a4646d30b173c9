/** A Store over any Kysely instance; the dialect modules only build the connection. */
import type { Kysely } from 'kysely';
import { kyselyRepositories } from './kysely-repositories.js';
import { currentSchemaVersion, ping } from './migrator.js';
import type { Repositories, Store } from './repositories.js';
import type { Database } from './schema.js';

export function kyselyStore(kind: Store['kind'], db: Kysely<Database>, onClose: () => Promise<void> = () => db.destroy()): Store {
  const repos = kyselyRepositories(db);
  let closed: Promise<void> | undefined;
  return {
    kind,
    ...repos,
    transaction: <T>(work: (repos: Repositories) => Promise<T>) => db.transaction().execute((trx) => work(kyselyRepositories(trx))),
    ping: () => ping(db),
    schemaVersion: () => currentSchemaVersion(db),
    close: () => (closed ??= onClose()),
  };
}
