/**
 * Raw HTTP/1.1 over a socket, for requests a client library will not send (no Host header,
 * pipelined requests, an unknown Expect) and for reading the answers exactly as they come.
 */
import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
}

/** The answers in what a connection received, in order (each with a Content-Length, or none). */
export function parseAnswers(received: string): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = received;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`incomplete answer: ${JSON.stringify(rest)}`);
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length'] ?? 0);
    answers.push({ status: Number(statusLine.split(' ')[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return answers;
}

/** An open connection: `send` writes, `answers` resolves with what came back once the server closed it. */
export function rawConnection(port: number): { send(text: string): void; answers: Promise<RawAnswer[]> } {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  const answers = new Promise<RawAnswer[]>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('close', () => {
      try {
        resolve(parseAnswers(received));
      } catch (error) {
        reject(error);
      }
    });
  });
  return { send: (text) => void socket.write(text), answers };
}
