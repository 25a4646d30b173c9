/**
 * A JSON answer with long lists (the unpaged wallet details: 30,000 coins and 30,000 transactions) serialised in
 * parts, between which other requests are answered (ADR 0010). Serialising such an answer whole, then measuring
 * and writing the one long string, held the process for about half a second.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { nextTurn } from '../services/turns.js';

/** Entries serialised between two turns: a few milliseconds' work. */
const ENTRIES_PER_PART = 1_000;

/** Lists shorter than this (together) are serialised whole, as Fastify does. */
const LONG = 2 * ENTRIES_PER_PART;

/**
 * Sends `value` as the route's serialiser writes it (byte for byte: each part is written by that serialiser),
 * the lists under `keys` `ENTRIES_PER_PART` entries per turn. The keys are top-level arrays of `value`, each
 * the only property of that name in the answer.
 */
export async function sendInParts<T extends object, K extends keyof T & string>(reply: FastifyReply, value: T, keys: readonly K[]): Promise<FastifyReply> {
  const lists = keys.map((key) => ({ key, entries: value[key] as unknown[] }));
  if (lists.reduce((sum, list) => sum + list.entries.length, 0) < LONG) return reply.send(value);
  const emptied = { ...value };
  for (const { key } of lists) (emptied as Record<string, unknown>)[key] = [];
  // The route's schema serialiser writes a string.
  const serialise = (part: unknown) => reply.serialize(part) as string;
  const frame = serialise(emptied);
  // Where each list's entries go in the frame: right after the `[` of its `"key":[]`.
  const places = lists.map((list) => {
    const marker = `${JSON.stringify(list.key)}:[`;
    const found = frame.indexOf(`${marker}]`);
    return { ...list, at: found < 0 ? -1 : found + marker.length };
  });
  if (places.some((place) => place.at < 0)) return reply.send(value); // a list the answer's schema leaves out
  places.sort((a, b) => a.at - b.at);
  const parts: Buffer[] = [];
  let written = 0;
  for (const { key, entries, at } of places) {
    parts.push(Buffer.from(frame.slice(written, at)));
    written = at;
    const before = frame.slice(0, at);
    const after = frame.slice(at);
    for (let from = 0; from < entries.length; from += ENTRIES_PER_PART) {
      await nextTurn();
      const serialised = serialise({ ...emptied, [key]: entries.slice(from, from + ENTRIES_PER_PART) });
      const inner = serialised.slice(before.length, serialised.length - after.length);
      parts.push(Buffer.from(from === 0 ? inner : `,${inner}`));
    }
  }
  parts.push(Buffer.from(frame.slice(written)));
  // Written part by part: joining them would copy the whole answer in one step again.
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  return reply.type('application/json; charset=utf-8').header('content-length', length).send(Readable.from(parts));
}
