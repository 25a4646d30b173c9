// Miniscript parse + type/sanity analysis + spending paths, per policy shape; beside
// @bitcoinerlab/miniscript's analyzeMiniscript (types and sanity only) when it can be imported
// (it is not a dependency: BITCOINERLAB=/path/to/node_modules/@bitcoinerlab/miniscript/dist/index.js).
// Times are CPU time of the process, medians of RUNS runs of at least 200 ms each.
// Runs against the built dist/ (npm run build first), or MINISCRIPT_DIST=<bundle of src/core/miniscript>.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { secp256k1 } from '@noble/curves/secp256k1.js';

const ms = await import(process.env.MINISCRIPT_DIST ?? '../../dist/core/miniscript/index.js');
let lab;
try {
  lab = createRequire(import.meta.url)(process.env.BITCOINERLAB ?? '@bitcoinerlab/miniscript');
} catch {
  lab = undefined;
}

const RUNS = Number(process.env.RUNS ?? 7);
const hex = (b) => Buffer.from(b).toString('hex');
const key = (i) => hex(secp256k1.getPublicKey(Buffer.from(i.toString(16).padStart(64, '0'), 'hex'), true));
const keys = (n, from = 1) => Array.from({ length: n }, (_, i) => key(i + from));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const core = JSON.parse(readFileSync(new URL('../../test/vectors/miniscript/bitcoin-core-fixed-tests.json', import.meta.url), 'utf8'));

const [A, B, C, H, L] = keys(5);
const CASES = {
  'inheritance wsh (2-of-3, heir after a year)': [`or_d(multi(2,${A},${B},${C}),and_v(v:pkh(${H}),older(52560)))`, 'wsh'],
  '2-of-3 to 2-of-4 with a lawyer (thresh)': [`thresh(2,pk(${A}),s:pk(${B}),s:pk(${C}),a:and_n(pk(${L}),n:older(26280)))`, 'wsh'],
  'tapscript multi_a 15-of-20': [`multi_a(15,${keys(20).join(',')})`, 'tapscript'],
  'tapscript thresh 10 of 20 pk': [`thresh(10,${keys(20).map((k, i) => (i ? `s:pk(${k})` : `pk(${k})`)).join(',')})`, 'tapscript'],
};

function ours(text, ctx) {
  const root = ms.parseMiniscript(text, ctx);
  const facts = ms.miniscriptFacts(root, ctx);
  ms.sanityProblem(root, facts);
  return ms.spendingPaths(root, ctx, [...new Set(ms.keysInOrder(root))], { signature: 72 });
}

/** CPU µs per call (user + system of this process: the machine's other load does not count). */
function time(fn, minCpuMs = 200) {
  let n = 0;
  const start = process.cpuUsage();
  let used = 0;
  while (used < minCpuMs * 1000) {
    fn();
    n++;
    const d = process.cpuUsage(start);
    used = d.user + d.system;
  }
  return used / n;
}

const rows = [];
for (const [name, [text, ctx]] of Object.entries(CASES)) {
  const a = [];
  const b = [];
  for (let r = 0; r < RUNS; r++) {
    a.push(time(() => ours(text, ctx)));
    if (lab) b.push(time(() => lab.analyzeMiniscript(text, { tapscript: ctx === 'tapscript' })));
  }
  rows.push([name, median(a).toFixed(1), lab ? median(b).toFixed(1) : '—']);
}
// The whole Core vector file, both contexts, parse + facts + sanity (no paths: some vectors have thousands).
const all = () => {
  for (const v of core) for (const ctx of ['wsh', 'tapscript']) {
    try {
      const root = ms.parseMiniscript(v.miniscript, ctx);
      ms.sanityProblem(root, ms.miniscriptFacts(root, ctx));
    } catch {
      // invalid vectors throw while parsing
    }
  }
};
const allLab = () => {
  for (const v of core) for (const tapscript of [false, true]) {
    try {
      lab.analyzeMiniscript(v.miniscript, { tapscript });
    } catch {
      // same
    }
  }
};
rows.push([`Core's ${core.length} fixed vectors x 2 contexts (types, sanity)`, median(Array.from({ length: RUNS }, () => time(all))).toFixed(0), lab ? median(Array.from({ length: RUNS }, () => time(allLab))).toFixed(0) : '—']);

console.log(`| case | ours µs | @bitcoinerlab/miniscript analyzeMiniscript µs |\n|---|---|---|`);
for (const r of rows) console.log(`| ${r.join(' | ')} |`);

// Addresses of compiled policies with four xpub keys (`/<0;1>/*`), derived 1,000 at a time.
const { NETWORKS } = await import(process.env.NETWORK_DIST ?? '../../dist/core/network.js');
const wallets = JSON.parse(readFileSync(new URL('../../test/fixtures/regtest/wallets.json', import.meta.url), 'utf8'));
const tpubs = [...new Set(Object.values(wallets).flatMap((w) => w.keys.map((k) => k.tpub)))].slice(0, 4);
console.log(`\n| descriptor (4 xpubs) | addresses per CPU second, batches of 1,000 |\n|---|---|`);
for (const script of ['wsh', 'tr']) {
  const paths = [{ threshold: 2, keys: tpubs.slice(0, 3).map((t) => `${t}/<0;1>/*`) }, { threshold: 1, keys: [`${tpubs[3]}/<0;1>/*`], older: 52560 }];
  const desc = ms.parseMiniscriptDescriptor(ms.compilePolicy({ script, paths }).descriptor, NETWORKS.regtest);
  let from = 0;
  const perCall = median(Array.from({ length: Math.min(RUNS, 5) }, () => time(() => ms.deriveMiniscriptRange(desc, (from += 1000), 1000, 0), 500)));
  console.log(`| ${script} 2-of-3 + heir | ${Math.round(1000 / (perCall / 1e6)).toLocaleString('en')} |`);
}
