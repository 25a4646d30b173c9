/** TypeBox schemas of the PSBT endpoints (spec "PSBT record", API-DECISIONS "PSBT creation" and "the PSBT lifecycle"). */
import { Type } from '@sinclair/typebox';

const ScriptSig = Type.Object({ asm: Type.String(), hex: Type.String() });

const ScriptPubKey = Type.Object(
  {
    asm: Type.String(),
    hex: Type.String(),
    reqSigs: Type.Optional(Type.Integer()),
    type: Type.String(),
    addresses: Type.Optional(Type.Array(Type.String())),
  },
  { additionalProperties: true },
);

const decodedTransaction = (strictInputs: boolean) => Type.Object(
  {
    txid: Type.String(),
    hash: Type.String(),
    version: Type.Integer(),
    size: Type.Integer(),
    vsize: Type.Integer(),
    weight: Type.Integer(),
    locktime: Type.Integer(),
    vin: Type.Array(
      strictInputs
        ? Type.Object(
            { txid: Type.String(), vout: Type.Integer(), scriptSig: ScriptSig, txinwitness: Type.Optional(Type.Array(Type.String())), sequence: Type.Integer() },
            { additionalProperties: true },
          )
        : // A previous transaction may be a coinbase (`coinbase` instead of txid, vout, scriptSig).
          Type.Object(
            { txid: Type.Optional(Type.String()), vout: Type.Optional(Type.Integer()), scriptSig: Type.Optional(ScriptSig), sequence: Type.Integer() },
            { additionalProperties: true },
          ),
    ),
    vout: Type.Array(Type.Object({ value: Type.Number({ description: 'BTC.' }), n: Type.Integer(), scriptPubKey: ScriptPubKey })),
  },
  { description: 'Decoded like Bitcoin Core decoderawtransaction, with reqSigs and addresses.' },
);

export const DecodedTransactionSchema = decodedTransaction(true);

const Derivation = Type.Object({ pubkey: Type.String(), master_fingerprint: Type.String(), path: Type.String() });

const PsbtInputSchema = Type.Object(
  {
    witness_utxo: Type.Optional(
      Type.Object({
        amount: Type.Number({ description: 'BTC.' }),
        scriptPubKey: Type.Object({ asm: Type.String(), hex: Type.String(), type: Type.String(), address: Type.Optional(Type.String()) }),
      }),
    ),
    non_witness_utxo: Type.Optional(decodedTransaction(false)),
    bip32_derivs: Type.Optional(Type.Array(Derivation)),
  },
  { additionalProperties: true, description: 'Further members as in Core decodepsbt: partial_signatures, redeem_script, witness_script, final_scriptSig, final_scriptwitness, taproot_* ...' },
);

const PsbtOutputSchema = Type.Object(
  { bip32_derivs: Type.Optional(Type.Array(Derivation)) },
  { additionalProperties: true, description: 'Further members as in Core decodepsbt: redeem_script, witness_script, taproot_*.' },
);

// Property order is the member order of the response.
export const PsbtRecordSchema = Type.Object({
  tx: DecodedTransactionSchema,
  unknown: Type.Record(Type.String(), Type.String()),
  inputs: Type.Array(PsbtInputSchema),
  outputs: Type.Array(PsbtOutputSchema),
  fee: Type.Number({ description: 'BTC.' }),
  fee_rate: Type.String({ description: 'sat/vB, two decimals: fee / tx_full_size.' }),
  tx_full_size: Type.Integer({ description: 'Estimated virtual size once fully signed (vbytes).' }),
  base64: Type.String({ description: 'The PSBT with every signature collected so far.' }),
  amount: Type.Array(Type.Number(), { description: 'Recipient amounts (BTC), in output order; change left out.' }),
  address: Type.Array(Type.String(), { description: 'Recipient addresses, aligned with amount.' }),
  time: Type.Number({ description: 'Creation time, seconds since the epoch.' }),
  sigs_count: Type.Integer({ description: 'Smallest number of signatures on any input (miniscript wallets: toward the PSBT\'s spending path).' }),
  spending_path: Type.Optional(Type.String({ description: 'Miniscript wallets: the id of the path the PSBT spends by (see the wallet\'s spending_paths).' })),
  sigs_required: Type.Optional(Type.Integer({ description: 'Miniscript wallets: signatures each input needs on that path.' })),
});


export const CreatePsbtBody = Type.Object({
  recipients: Type.Optional(Type.Array(
    Type.Object({
      address: Type.String({ description: 'Address of the service network; bech32 in any case.' }),
      amount: Type.Union([Type.Number(), Type.String()], { description: 'In the unit of the entry; converted exactly from its decimal text.' }),
      unit: Type.Optional(Type.Union([Type.Literal('btc'), Type.Literal('sat')], { default: 'btc' })),
      label: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'Stored as the address label.' })),
    }),
    { minItems: 1, maxItems: 1000, description: 'Required, except with `refresh`.' },
  )),
  refresh: Type.Optional(
    Type.Boolean({
      description:
        'Miniscript wallets: spend every coin whose recovery path opens within `timelock_warning_blocks` (the wallet\'s `timelock_expiring`) back to the wallet\'s next change address by the primary path, the fee taken from it, which starts their locks again. Without recipients, inputs, change_address, rbf_tx_id or subtract. None: 422 `nothing_to_refresh`.',
    }),
  ),
  fee_rate: Type.Optional(Type.Union([Type.Number(), Type.String(), Type.Null()], { description: 'sat/vB; absent or empty: estimated for 6 blocks.' })),
  rbf: Type.Optional(Type.Boolean({ default: true, description: 'Signal BIP125 replaceability (nSequence 0xfffffffd).' })),
  subtract: Type.Optional(Type.Boolean({ default: false, description: 'Take the fee from recipient subtract_from.' })),
  subtract_from: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: '0-based recipient index.' })),
  rbf_tx_id: Type.Optional(Type.String({ description: 'Txid of an unconfirmed wallet transaction to replace; empty for a new one.' })),
  inputs: Type.Optional(Type.Array(Type.Object({ txid: Type.String(), vout: Type.Integer({ minimum: 0 }) }), { description: 'Coin control: spend exactly these coins.' })),
  change_address: Type.Optional(Type.String({ description: 'Where change goes instead of the next unused change address.' })),
  spending_path: Type.Optional(
    Type.String({
      description:
        'Miniscript wallets: the id of the path to spend by (default `primary`). Coins that path cannot spend yet are not selected; none spendable yet, or such a coin in `inputs`: 422 `timelock_not_met` naming the height from which it can. The PSBT sets the nSequence / nLockTime the path needs and carries its keys\' derivations.',
    }),
  ),
});


export const UpdatePsbtBody = Type.Object({
  psbt: Type.String({ description: 'Base64 copy of the same unsigned transaction carrying cosigners’ signatures.' }),
});

/** The same copy as the binary PSBT file (`Content-Type: application/octet-stream`). */
export const BinaryPsbtBody = Type.String({ contentMediaType: 'application/octet-stream', description: 'The binary PSBT file (starting with `psbt\\xff`) of the same unsigned transaction carrying cosigners’ signatures.' });

export const WalletParams = Type.Object({ wallet_alias: Type.String({ maxLength: 200 }) });
export const PsbtParams = Type.Object({ wallet_alias: Type.String({ maxLength: 200 }), txid: Type.String({ maxLength: 200 }) });
export const PsbtQuery = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('json'), Type.Literal('base64'), Type.Literal('binary')])),
  version: Type.Optional(Type.Union([Type.Literal('0'), Type.Literal('2')], { description: 'PSBT version of the download: 0 (BIP174, default) or 2 (BIP370); the same transaction and signatures.' })),
});

export const PsbtResult = Type.Object({ result: PsbtRecordSchema });
export const PsbtList = Type.Object({ result: Type.Record(Type.String(), PsbtRecordSchema, { description: 'Keyed by txid, newest first.' }) });
export const BroadcastBody = Type.Object({ txid: Type.String(), hex: Type.String() });
export const DeletedPsbtBody = Type.Object({ message: Type.Literal('PSBT deleted') });
