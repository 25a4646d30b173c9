// What the heap holds more of between two heap snapshots (V8 `.heapsnapshot`), per kind of object: the self sizes
// of each constructor's objects (strings, arrays, closures and code by their V8 kind), and the difference divided by
// `--per N` (e.g. the wallets created between the two snapshots) to read it as bytes per wallet.
//
//   node bench/many-wallets/heap-diff.mjs A.heapsnapshot B.heapsnapshot [--per 1000] [--top 25]
import { readFileSync } from 'node:fs';

const [first, second] = process.argv.slice(2).filter((a) => !a.startsWith('--') && !/^\d+$/.test(a));
const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const PER = option('per', 1);
const TOP = option('top', 25);

/** Self sizes and counts per `kind:name` of one snapshot. */
function totals(path) {
  const { snapshot, nodes, strings } = JSON.parse(readFileSync(path, 'utf8'));
  const fields = snapshot.meta.node_fields;
  const types = snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f));
  const byKind = new Map();
  let all = 0;
  for (let i = 0; i < nodes.length; i += fields.length) {
    const type = types[nodes[i + typeAt]];
    // Objects and closures by their constructor's or function's name; the rest (strings, arrays, code) by V8's kind.
    const key = type === 'object' || type === 'closure' ? `${type}:${strings[nodes[i + nameAt]]}` : type === 'native' || type === 'hidden' || type === 'array' ? `${type}:${strings[nodes[i + nameAt]].slice(0, 40)}` : type;
    const size = nodes[i + sizeAt];
    const entry = byKind.get(key) ?? { size: 0, count: 0 };
    entry.size += size;
    entry.count++;
    byKind.set(key, entry);
    all += size;
  }
  return { byKind, all };
}

const a = totals(first);
const b = totals(second);
const rows = [...new Set([...a.byKind.keys(), ...b.byKind.keys()])].map((key) => {
  const before = a.byKind.get(key) ?? { size: 0, count: 0 };
  const after = b.byKind.get(key) ?? { size: 0, count: 0 };
  return { key, size: after.size - before.size, count: after.count - before.count };
});
rows.sort((x, y) => y.size - x.size);
console.log(`heap ${(a.all / 1e6).toFixed(1)} MB -> ${(b.all / 1e6).toFixed(1)} MB: ${((b.all - a.all) / PER).toFixed(0)} bytes per ${PER === 1 ? 'snapshot' : 'unit'}`);
for (const row of rows.slice(0, TOP)) {
  console.log(`${(row.size / PER).toFixed(0).padStart(8)} B ${(row.count / PER).toFixed(1).padStart(7)} objects  ${row.key}`);
}
