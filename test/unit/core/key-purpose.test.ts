import { describe, expect, it } from 'vitest';
import { singleSignaturePathWarning } from '../../../src/core/descriptor/index.js';

const key = (fingerprint: string, derivation: string) => ({ fingerprint, derivation });

describe('multisig keys from single-signature account paths', () => {
  it('names every key whose origin uses the BIP44, BIP49, BIP84 or BIP86 purpose', () => {
    const warning = singleSignaturePathWarning([key('aaaaaaaa', 'm/84h/1h/0h'), key('bbbbbbbb', 'm/48h/1h/0h/2h'), key('cccccccc', "m/44'/0'/3'")]);
    expect(warning).toContain("key 1 (aaaaaaaa, m/84h/1h/0h, BIP84) and key 3 (cccccccc, m/44'/0'/3', BIP44) come from a single-signature account path");
    expect(warning).not.toContain('bbbbbbbb');
    for (const purpose of ['49', '86']) expect(singleSignaturePathWarning([key('aaaaaaaa', `m/${purpose}h/0h/0h`), key('bbbbbbbb', 'm/48h/0h/0h/2h')])).toContain(`BIP${purpose})`);
  });

  it('says nothing for multisig paths, unhardened or absent origins, and single-key wallets', () => {
    expect(singleSignaturePathWarning([key('aaaaaaaa', 'm/48h/1h/0h/2h'), key('bbbbbbbb', 'm/87h/1h/0h')])).toBeUndefined();
    expect(singleSignaturePathWarning([key('aaaaaaaa', 'm/84/1/0'), key('bbbbbbbb', 'm')])).toBeUndefined();
    expect(singleSignaturePathWarning([key('aaaaaaaa', 'm/84h/1h/0h')])).toBeUndefined();
  });
});
