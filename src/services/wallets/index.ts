/** The wallet part, split by who acts: access checks, reads, the owner's administration, coins and spending. */
export { WalletAccess, WALLET_NOT_FOUND_MESSAGE, type WalletAccessNeed } from './access.js';
export { WalletAdmin, chainUnavailable } from './admin.js';
export { WalletCoins } from './coins.js';
export { WalletReads, type ChainAccess } from './reads.js';
export type { SpendableUtxo, WalletForSpending } from './spending.js';
export { WalletFiles, readImport, type ExportedWalletFile } from './files.js';
export { WalletLabels, MAX_LABEL_LINES, type LabelImportResult } from './labels.js';
