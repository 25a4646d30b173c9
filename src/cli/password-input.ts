/** Reads a password: from a no-echo prompt on a terminal, or the first line of piped stdin. */
import { createInterface } from 'node:readline';

/** Reads every line of piped stdin once; the same lines serve later calls. */
let pipedLines: Promise<string[]> | undefined;

function readPipedLines(): Promise<string[]> {
  return (pipedLines ??= new Promise((resolve, reject) => {
    const lines: string[] = [];
    const rl = createInterface({ input: process.stdin, terminal: false });
    rl.on('line', (line) => lines.push(line));
    rl.on('close', () => resolve(lines));
    rl.on('error', reject);
  }));
}

function promptHidden(prompt: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write(prompt);
    let value = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (error?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return done();
        if (ch === '\u0003') return done(new Error('Cancelled'));
        if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('');
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

export async function readNewPassword(): Promise<string> {
  if (process.stdin.isTTY) {
    const first = await promptHidden('Password: ');
    const second = await promptHidden('Repeat password: ');
    if (first !== second) throw new Error('The passwords do not match');
    return first;
  }
  const [line] = await readPipedLines();
  if (line === undefined) throw new Error('No password on stdin (give it as the first line)');
  return line;
}
