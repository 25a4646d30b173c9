/** TypeBox schemas of the wallet endpoints (property order is the response member order). */
import { Type } from '@sinclair/typebox';
import { Nullable, StringEnum } from '../schemas.js';
import { UNPAGED_WALLET_LIST_MAX } from '../../services/wallets/reads.js';

const Btc = (description: string) => Type.Number({ description: `${description}, BTC.` });
const Sat = (description: string) => Type.Integer({ description: `${description}, satoshis.` });

export const BalanceSchema = Type.Object({
  confirmed: Btc('Confirmed (trusted) balance'),
  unconfirmed: Btc('Unconfirmed incoming (untrusted pending)'),
  immature: Btc('Coinbase outputs not yet mature'),
  total: Btc('Sum of the three'),
  confirmed_sat: Sat('confirmed'),
  unconfirmed_sat: Sat('unconfirmed'),
  immature_sat: Sat('immature'),
  total_sat: Sat('total'),
});

export const UtxoSchema = Type.Object({
  txid: Type.String(),
  vout: Type.Integer(),
  address: Type.String(),
  amount: Btc('Value'),
  amount_sat: Sat('Value'),
  confirmations: Type.Integer(),
  label: Type.String(),
  reserved_by: Nullable(Type.String(), { description: 'Txid of the pending PSBT holding the coin, or null.' }),
  spendable_from: Type.Optional(
    Type.Record(Type.String(), Type.Integer(), {
      description:
        'Miniscript wallets: spending path id -> the first block height a transaction spending the coin by that path can be mined in (its timelock reached). A path of a relative lock is absent while the coin is unconfirmed; a lock in time is not given in heights.',
    }),
  ),
});

export const UtxoWithFlagsSchema = Type.Object({ ...UtxoSchema.properties, frozen: Type.Boolean({ description: 'A frozen coin is never selected for a PSBT.' }) });

export const TxEntrySchema = Type.Object({
  txid: Type.String(),
  wallet_alias: Type.String(),
  category: StringEnum(['receive', 'send', 'selftransfer']),
  amount: Btc('Net effect on the wallet (positive for receive, fee included)'),
  amount_sat: Sat('Net effect on the wallet'),
  fee: Nullable(Type.Number(), { description: 'Fee in BTC when the wallet paid every input, else null.' }),
  address: Nullable(Type.String(), { description: 'Counterparty address for sends, receiving address otherwise.' }),
  label: Type.String(),
  confirmations: Type.Integer(),
  blockheight: Nullable(Type.Integer()),
  blockhash: Nullable(Type.String()),
  time: Type.Integer({ description: 'Block time, or first-seen time while unconfirmed (seconds).' }),
  vsize: Type.Integer(),
  'bip125-replaceable': StringEnum(['yes', 'no', 'unknown']),
  conflicts: Type.Array(Type.String()),
  hex: Type.String(),
});

export const KeySchema = Type.Object({ fingerprint: Type.String(), derivation: Type.String(), xpub: Type.String(), label: Type.String() });

export const TimelockSchema = Type.Union(
  [
    Type.Object({ type: Type.Literal('relative_blocks'), blocks: Type.Integer({ description: 'Blocks after the coin\'s own block (older(n)).' }) }),
    Type.Object({ type: Type.Literal('relative_time'), seconds: Type.Integer({ description: 'Seconds after the coin\'s block, in units of 512 (older(n) with the time flag).' }) }),
    Type.Object({ type: Type.Literal('absolute_height'), height: Type.Integer({ description: 'The transaction\'s nLockTime (after(n)): mined from height + 1.' }) }),
    Type.Object({ type: Type.Literal('absolute_time'), time: Type.Integer({ description: 'Unix time (after(n)).' }) }),
    Type.Null(),
  ],
  { description: 'What the path waits for; null for a path without a lock.' },
);

export const SpendingPathSchema = Type.Object({
  id: Type.String({ description: '`primary` (the first path without a lock), then `recovery-1`, `recovery-2`...' }),
  threshold: Type.Integer({ description: 'Signatures the path needs.' }),
  keys: Type.Array(Type.Object({ fingerprint: Type.String(), label: Type.String() }), { description: 'Keys that can sign on this path.' }),
  timelock: TimelockSchema,
});

const SpendingPaths = Type.Optional(Type.Array(SpendingPathSchema, { description: 'Miniscript wallets only: each way to spend, the primary path first.' }));

export const WalletDetailsSchema = Type.Object({
  alias: Type.String(),
  name: Type.String(),
  description: Type.String(),
  network: Type.String(),
  address_type: Type.String({ description: '`bech32`, `bech32m`, `p2sh-segwit` or `legacy`.' }),
  sigs_required: Type.Integer(),
  sigs_total: Type.Integer(),
  keys: Type.Array(KeySchema),
  recv_descriptor: Type.String(),
  change_descriptor: Type.String(),
  address: Type.String({ description: 'Next unused receive address; `addresses/next` never hands this one out (it stays until the chain uses it or an address after it).' }),
  address_index: Type.Integer(),
  change_address: Type.String({ description: 'Next unused change address.' }),
  change_index: Type.Integer(),
  balance: BalanceSchema,
  utxo: Type.Array(UtxoSchema),
  txlist: Type.Array(TxEntrySchema, { description: 'Newest first.' }),
  scan: Nullable(
    Type.Object({
      progress: Type.Number({ minimum: 0, maximum: 1 }),
      height: Type.Integer(),
      error: Type.Optional(
        Type.Object(
          { code: Type.Literal('history_too_large'), message: Type.String() },
          { description: 'The chain source refuses to follow the wallet; it stays at `height` until it does (cleared then).' },
        ),
      ),
    }),
    { description: 'Progress while the wallet syncs, or why it cannot; null when it is at the chain tip.' },
  ),
  pending_psbts: Type.Integer(),
  spending_paths: SpendingPaths,
  timelock_expiring: Type.Optional(
    Type.Array(
      Type.Object({
        txid: Type.String(),
        vout: Type.Integer(),
        spending_path: Type.String({ description: 'The first recovery path to open for the coin.' }),
        from_height: Type.Integer({ description: 'The height it opens at.' }),
      }),
      {
        description:
          'Miniscript wallets: the listed coins (see `utxo`) whose recovery path opens within `timelock_warning_blocks` (default 4320, about 30 days) of the next block, or has opened. A PSBT with `refresh: true` spends them back to the wallet by the primary path, which starts their locks again.',
      },
    ),
  ),
});

export const WalletListSchema = Type.Object({
  wallets: Type.Array(
    Type.Object({
      alias: Type.String(),
      name: Type.String(),
      description: Type.String(),
      address_type: Type.String(),
      sigs_required: Type.Integer(),
      sigs_total: Type.Integer(),
      balance: Nullable(BalanceSchema, { description: 'Null only with `error`: the balance is unknown until the wallet is rescanned.' }),
      error: Type.Optional(
        Type.Object(
          { code: Type.Literal('wallet_rows_inconsistent'), message: Type.String() },
          { description: "The wallet's stored chain data is inconsistent (its reads answer 503 with the same code); a rescan rebuilds it." },
        ),
      ),
      spending_paths: SpendingPaths,
    }),
  ),
  total: Type.Integer({ description: 'Wallets you can access in all, whatever the page.' }),
});

/** The wallet list: `limit`/`offset` page it (default: every wallet). */
export const WalletListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 0, description: `Most wallets in \`wallets\` (default: all of them, up to ${UNPAGED_WALLET_LIST_MAX}; past that, required).` })),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Wallets skipped first (default 0).' })),
});

const ShareSchema = Type.Object({ user: Type.String(), access: Type.Union([Type.Literal('read'), Type.Literal('spend')]) });
const KeyLabelSchema = Type.Object({ fingerprint: Type.String({ description: 'Master fingerprint, 8 hex digits.' }), label: Type.String() });

export const CreateWalletBody = Type.Object({
  name: Type.Optional(Type.String({ description: 'Display name; required unless `import` is given. From a file without a name: the `alias`, else the wallet\'s kind (`2-of-3 wsh-sortedmulti`, with ` (2)`... when the owner has a wallet so named).' })),
  alias: Type.Optional(Type.String({ description: '`[a-z0-9_-]{1,64}`, unique; derived from the name when absent.' })),
  description: Type.Optional(Type.String()),
  descriptor: Type.Optional(Type.String({ description: 'One multipath descriptor (`<0;1>`).' })),
  recv_descriptor: Type.Optional(Type.String()),
  change_descriptor: Type.Optional(Type.String()),
  policy: Type.Optional(
    Type.Union([
      Type.Object({
        type: Type.String({ description: 'wpkh, sh-wpkh, pkh, tr, wsh-sortedmulti, wsh-multi, sh-wsh-sortedmulti, sh-wsh-multi, sh-sortedmulti, sh-multi.' }),
        threshold: Type.Optional(Type.Integer()),
        keys: Type.Array(Type.Object({ key: Type.String({ description: '`[fingerprint/path]xpub` (SLIP-132 forms accepted).' }), label: Type.Optional(Type.String()) })),
      }),
      Type.Object(
        {
          type: Type.Literal('paths'),
          script: Type.String({ description: '`wsh` or `tr`.' }),
          paths: Type.Array(
            Type.Object({
              threshold: Type.Optional(Type.Integer()),
              keys: Type.Array(
                Type.Union([
                  Type.Object({ key: Type.String({ description: 'Account key `[fingerprint/path]xpub`; `/<0;1>/*` is added.' }), label: Type.Optional(Type.String()) }),
                  Type.String(),
                ]),
              ),
              after_blocks: Type.Optional(Type.Integer({ description: 'Relative lock: the path spends a coin this many blocks after its block (1..65535).' })),
              after_height: Type.Optional(Type.Integer({ description: 'Absolute lock: the path spends from this block height on (1..499999999).' })),
            }),
            { description: 'The first path without a lock is the primary one; the others are timelocked recoveries.' },
          ),
        },
        { description: 'A miniscript wallet: the paths compiled to wsh(miniscript) or tr(KEY,{leaves}). A policy that is not sane miniscript is 400 naming the reason.' },
      ),
    ]),
  ),
  key_labels: Type.Optional(Type.Array(KeyLabelSchema)),
  birthday: Type.Optional(Type.Union([Type.Integer({ minimum: 0 }), Type.String()], { description: 'Block height or `YYYY-MM-DD`; default: the chain tip.' })),
  gap_limit: Type.Optional(Type.Integer({ description: 'Default 20.' })),
  shared_with: Type.Optional(Type.Array(ShareSchema)),
  import: Type.Optional(
    Type.String({
      description:
        'Text of a wallet setup file instead of descriptor/policy: output descriptors (one multipath or a receive/change pair), a BIP129 BSMS 1.0 descriptor record, a Coldcard multisig setup file, a Specter wallet export or a Caravan wallet configuration (also as Sparrow writes them). Its name, key labels and birthday apply where the request gives none. Malformed: 400 `invalid_wallet_file`; another network, threshold above the key count, a repeated key, a BSMS first address that does not match: 422.',
    }),
  ),
  import_format: Type.Optional(
    Type.Union([Type.Literal('descriptor'), Type.Literal('bsms'), Type.Literal('coldcard'), Type.Literal('specter'), Type.Literal('caravan')], {
      description: 'Format of `import`; detected from the content when absent.',
    }),
  ),
});

export const UpdateWalletBody = Type.Object({
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  gap_limit: Type.Optional(Type.Integer({ description: 'Unused addresses watched past the last used one, per branch; also how far past it `addresses/next` may reveal.' })),
  labels: Type.Optional(Type.Array(KeyLabelSchema, { description: 'Key labels by master fingerprint.' })),
  shared_with: Type.Optional(Type.Array(ShareSchema, { description: 'Replaces the sharing list (owner only).' })),
});

export const WalletParams = Type.Object({ wallet_alias: Type.String({ maxLength: 64 }) });

export const PageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 0 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
});

/** Wallet details: `limit`/`offset` page the transaction list, `utxo_limit`/`utxo_offset` the coin list (default: all). */
export const DetailsQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 0, description: 'Most transactions in `txlist` (default: all).' })),
  offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Transactions of `txlist` skipped, newest first.' })),
  utxo_limit: Type.Optional(Type.Integer({ minimum: 0, description: 'Most coins in `utxo` (default: all).' })),
  utxo_offset: Type.Optional(Type.Integer({ minimum: 0, description: 'Coins of `utxo` skipped, most confirmations first.' })),
});

/** The query of an address page; `count` up to the configured `address_page_max`. */
export const addressesQuery = (pageMax: number) =>
  Type.Object({
    branch: Type.Optional(Type.Union([Type.Literal('receive'), Type.Literal('change')])),
    from: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'First index; from + count may not pass 2^31 (400).' })),
    count: Type.Optional(Type.Integer({ minimum: 1, maximum: pageMax, description: `Addresses in the page (default 20, at most ${pageMax}).` })),
  });

export const AddressListSchema = Type.Object({
  addresses: Type.Array(Type.Object({ index: Type.Integer(), address: Type.String(), label: Type.String(), used: Type.Boolean() })),
});

/** Answer of `POST /wallets/{alias}/addresses/next`: the receive address handed out and its index. */
export const RevealedAddressSchema = Type.Object({ address: Type.String(), index: Type.Integer({ minimum: 0 }) });

export const UtxoPatchBody = Type.Object({
  txid: Type.String({ pattern: '^[0-9a-fA-F]{64}$' }),
  vout: Type.Integer({ minimum: 0 }),
  frozen: Type.Optional(Type.Boolean()),
  label: Type.Optional(Type.String()),
});

export const RescanBody = Type.Object({ from: Type.Optional(Type.Integer({ minimum: 0, description: 'Block height to scan from; default: the wallet birthday.' })) });
