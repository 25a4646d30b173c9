/** The authenticated caller, as every use case sees it. */
export interface Principal {
  userName: string;
  isAdmin: boolean;
  /** Id of the token used, when the caller came with a Bearer token. */
  tokenId?: string;
}
