/**
 * A JSON answer with long lists (the unpaged wallet details: 30,000 coins and 30,000 transactions) serialised in
 * parts, between which other requests are answered (ADR 0010). Serialising such an answer whole, then measuring
 * and writing the one long string, held the process for about half a second; a PSBT record of 940 inputs, 60 ms.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { nextTurn } from '../services/turns.js';

/** Entries serialised between two turns (fewer for larger entries): a few milliseconds' work. */
const ENTRIES_PER_PART = 1_000;

/** A list in the answer: the property names leading to it from the top. */
export type ListPath = readonly string[];

const listAt = (value: unknown, path: ListPath): unknown[] =>
  (path.reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], value) as unknown[] | undefined) ?? [];

/** `value` with the list at `path` replaced by `list`: the objects on the way copied, nothing else. */
function withList<T>(value: T, path: ListPath, list: unknown[]): T {
  const [key, ...rest] = path as [string, ...string[]];
  const node = value as Record<string, unknown>;
  return { ...node, [key]: rest.length === 0 ? list : withList(node[key], rest, list) } as T;
}

/**
 * Sends `value` as the route's serialiser writes it (byte for byte: each part is written by that serialiser),
 * the lists at `paths` `perPart` entries per turn. Each list's property name must occur once in the answer
 * without its lists; when not, or when the lists are short, the answer is serialised whole, as Fastify does.
 */
export async function sendInParts<T extends object>(reply: FastifyReply, value: T, paths: readonly ListPath[], perPart = ENTRIES_PER_PART): Promise<FastifyReply> {
  const lists = paths.map((path) => ({ path, entries: listAt(value, path) }));
  if (lists.reduce((sum, list) => sum + list.entries.length, 0) < 2 * perPart) return reply.send(value);
  const emptied = lists.reduce((emptying, { path }) => withList(emptying, path, []), value);
  // The route's schema serialiser writes a string.
  const serialise = (part: unknown) => reply.serialize(part) as string;
  const frame = serialise(emptied);
  // Where each list's entries go in the frame: right after the `[` of its `"key":[]`.
  const places = lists.map((list) => {
    const marker = `${JSON.stringify(list.path.at(-1))}:[`;
    const found = frame.indexOf(`${marker}]`);
    return { ...list, at: found < 0 || found !== frame.lastIndexOf(`${marker}]`) ? -1 : found + marker.length };
  });
  if (places.some((place) => place.at < 0)) return reply.send(value);
  places.sort((a, b) => a.at - b.at);
  const parts: Buffer[] = [];
  let written = 0;
  for (const { path, entries, at } of places) {
    parts.push(Buffer.from(frame.slice(written, at)));
    written = at;
    const before = frame.slice(0, at);
    const after = frame.slice(at);
    for (let from = 0; from < entries.length; from += perPart) {
      await nextTurn();
      const serialised = serialise(withList(emptied, path, entries.slice(from, from + perPart)));
      const inner = serialised.slice(before.length, serialised.length - after.length);
      parts.push(Buffer.from(from === 0 ? inner : `,${inner}`));
    }
  }
  parts.push(Buffer.from(frame.slice(written)));
  // Written part by part: joining them would copy the whole answer in one step again.
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  return reply.type('application/json; charset=utf-8').header('content-length', length).send(Readable.from(parts));
}
