/**
 * Exports that hold any wallet the service keeps, miniscript included: one multipath descriptor with its
 * checksum, and a BIP388 wallet policy (`descriptor_template` with keys as `@i/**`, `keys_info`), the form
 * Ledger, Coldcard and Jade register.
 */
import { addChecksum, stripChecksum } from '../../core/descriptor/index.js';
import { CoreError } from '../../core/errors.js';

/** `[fingerprint/origin]xpub` followed by its receive step and wildcard. */
const RECEIVE_KEY = /(\[[0-9a-fA-F]{8}(?:\/\d+[hH']?)*\])?([xt]pub[1-9A-HJ-NP-Za-km-z]{100,112})\/0\/\*/g;

const unsupported = (message: string) => new CoreError('export_unsupported', message);

/** The receive and change descriptors as one `/<0;1>/*` descriptor with its checksum; 422 when they are no such pair. */
export function multipathDescriptor(receive: string, change: string): string {
  const body = stripChecksum(receive).body;
  const changeBody = stripChecksum(change).body;
  if (body.replace(RECEIVE_KEY, '$1$2/1/*') !== changeBody) throw unsupported('The wallet\'s receive and change descriptors are not the /0/* and /1/* branches of one multipath descriptor');
  return addChecksum(body.replace(RECEIVE_KEY, '$1$2/<0;1>/*'));
}

export interface Bip388Policy {
  name: string;
  descriptor_template: string;
  keys_info: string[];
}

/** The BIP388 wallet policy of the wallet: each key once, in order of first appearance. */
export function bip388Policy(name: string, receive: string, change: string): Bip388Policy {
  multipathDescriptor(receive, change);
  const keys: string[] = [];
  const template = stripChecksum(receive).body.replace(RECEIVE_KEY, (_, origin: string | undefined, xpub: string) => {
    const info = `${origin ?? ''}${xpub}`;
    if (!keys.includes(info)) keys.push(info);
    return `@${keys.indexOf(info)}/**`;
  });
  if (/[0-9a-fA-F]{64}/.test(template)) throw unsupported('A BIP388 wallet policy names keys as xpubs only; this wallet has a fixed key (e.g. an unspendable taproot internal key)');
  return { name, descriptor_template: template, keys_info: keys };
}
