/** A small JSON-RPC client of a real Bitcoin Core for tests: node methods, and wallet methods at `/wallet/<name>`. */

export class BitcoindRpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    readonly rpcMessage: string,
  ) {
    super(`bitcoind ${method}: ${rpcMessage} (code ${code})`);
  }
}

export class BitcoindRpc {
  private readonly authorization: string;

  constructor(
    readonly url: string,
    user: string,
    password: string,
  ) {
    this.authorization = `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
  }

  /** Calls `method` (positional or named params); with `wallet`, on that wallet's endpoint. */
  async call<T = any>(method: string, params: unknown[] | Record<string, unknown> = [], wallet?: string): Promise<T> {
    const endpoint = wallet === undefined ? this.url : `${this.url}/wallet/${encodeURIComponent(wallet)}`;
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: { authorization: this.authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '1.0', id: method, method, params }),
    });
    const text = await response.text();
    let body: { result?: T; error?: { code: number; message: string } | null };
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`bitcoind ${method}: HTTP ${response.status} ${text.slice(0, 200)}`);
    }
    if (body.error) throw new BitcoindRpcError(method, body.error.code, body.error.message);
    return body.result as T;
  }

  /** The same calls on one wallet. */
  wallet(name: string): WalletRpc {
    return { name, call: (method, params = []) => this.call(method, params, name) };
  }
}

export interface WalletRpc {
  name: string;
  call<T = any>(method: string, params?: unknown[] | Record<string, unknown>): Promise<T>;
}
