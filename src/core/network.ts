/** The Bitcoin networks the service knows, with their address and extended-key parameters. */

export const NETWORK_NAMES = ['mainnet', 'testnet', 'testnet4', 'signet', 'regtest'] as const;
export type NetworkName = (typeof NETWORK_NAMES)[number];

/** SLIP-132 names of extended public key versions. */
export type XpubKind = 'xpub' | 'ypub' | 'zpub' | 'Ypub' | 'Zpub' | 'tpub' | 'upub' | 'vpub' | 'Upub' | 'Vpub';

export interface Network {
  readonly name: NetworkName;
  /** base58check version byte of P2PKH addresses. */
  readonly pubKeyHash: number;
  /** base58check version byte of P2SH addresses. */
  readonly scriptHash: number;
  /** Human-readable part of bech32/bech32m segwit addresses. */
  readonly bech32: string;
  readonly wif: number;
  /** Version of plain BIP32 extended keys (xpub/tpub, xprv/tprv). */
  readonly bip32: { readonly public: number; readonly private: number };
  /** Every extended public key version accepted on this network, by its SLIP-132 name. */
  readonly xpubVersions: Readonly<Partial<Record<XpubKind, number>>>;
  /** Name Bitcoin Core's `getblockchaininfo` reports in `chain`. */
  readonly coreChainName: string;
}

const MAINNET_XPUBS = { xpub: 0x0488b21e, ypub: 0x049d7cb2, zpub: 0x04b24746, Ypub: 0x0295b43f, Zpub: 0x02aa7ed3 } as const;
const TEST_XPUBS = { tpub: 0x043587cf, upub: 0x044a5262, vpub: 0x045f1cf6, Upub: 0x024289ef, Vpub: 0x02575483 } as const;

const testLike = (name: NetworkName, bech32: string, coreChainName: string): Network => ({
  name,
  pubKeyHash: 0x6f,
  scriptHash: 0xc4,
  bech32,
  wif: 0xef,
  bip32: { public: 0x043587cf, private: 0x04358394 },
  xpubVersions: TEST_XPUBS,
  coreChainName,
});

export const NETWORKS: Readonly<Record<NetworkName, Network>> = {
  mainnet: {
    name: 'mainnet',
    pubKeyHash: 0x00,
    scriptHash: 0x05,
    bech32: 'bc',
    wif: 0x80,
    bip32: { public: 0x0488b21e, private: 0x0488ade4 },
    xpubVersions: MAINNET_XPUBS,
    coreChainName: 'main',
  },
  testnet: testLike('testnet', 'tb', 'test'),
  testnet4: testLike('testnet4', 'tb', 'testnet4'),
  signet: testLike('signet', 'tb', 'signet'),
  regtest: testLike('regtest', 'bcrt', 'regtest'),
};

export function isNetworkName(name: string): name is NetworkName {
  return (NETWORK_NAMES as readonly string[]).includes(name);
}

export function getNetwork(name: NetworkName): Network {
  return NETWORKS[name];
}

/** The network whose Bitcoin Core `chain` name is given (`main`, `test`, `testnet4`, `signet`, `regtest`). */
export function networkFromCoreChain(chain: string): Network | undefined {
  return Object.values(NETWORKS).find((n) => n.coreChainName === chain);
}
