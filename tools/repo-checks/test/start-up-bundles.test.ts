import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { repo } from './workspace';

/**
 * The start-up bundles (`@ssi/core/bundle-dist`, docs/architecture.md "Start-up bundles"): a
 * process that imports the MPI layer and plugins by their ES module files gets each package's
 * code from its bundle, one copy per process, and the bundles' V8 code cache is written once,
 * used after, replaced when V8 rejects it, and never taken from a directory others can write.
 * Each case runs a fresh Node process (the loader keeps its state on globalThis).
 */
const work = mkdtempSync(join(tmpdir(), 'ssi-start-up-bundles-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const BUNDLED = [
  'packages/core',
  'packages/lam',
  'packages/mpi',
  'packages/shm',
  'plugins/rpi-sm',
  'plugins/rpi-tcp',
  'plugins/coll-tuned',
  'packages/sched',
];
const url = (dir: string) => pathToFileURL(join(repo, dir, 'dist/index.js')).href;

/** What a process that imported every package of BUNDLED saw, as JSON. */
const PROBE = `
const urls = ${JSON.stringify(BUNDLED.map(url))};
const [core, lam, mpi] = await Promise.all(urls.slice(0, 3).map((u) => import(u)));
for (const u of urls.slice(3)) await import(u);
const loaded = globalThis[Symbol.for('@ssi/start-up-bundles')];
const bundles = [...loaded.entries()].map(([file, m]) => ({ file, codeCache: m.codeCache }));
const coreBundle = [...loaded.entries()].find(([f]) => f.endsWith('/packages/core/dist/ssi-bundle.cjs'));
const sameCore = coreBundle[1].exports['index.js'].SsiError === core.SsiError;
const mpiError = new mpi.MpiError(mpi.ErrorClass.ERR_OTHER, 'probe');
console.log(JSON.stringify({ bundles, sameCore, mpiErrorIsSsiError: mpiError instanceof core.SsiError,
  lamLoaded: typeof lam.LamClient === 'function' }));
`;

interface Probe {
  bundles: { file: string; codeCache: string }[];
  sameCore: boolean;
  mpiErrorIsSsiError: boolean;
  lamLoaded: boolean;
}

/** `cacheSetting` null: SSI_CODE_CACHE unset (the default place). */
function probe(cacheSetting: string | null): Probe {
  const { SSI_CODE_CACHE: _unset, ...inherited } = process.env;
  const env = cacheSetting === null ? inherited : { ...inherited, SSI_CODE_CACHE: cacheSetting };
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', PROBE], {
    env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (r.status !== 0) throw new Error(`probe exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

const cacheStates = (p: Probe) => [...new Set(p.bundles.map((b) => b.codeCache))];

/** Builds a start-up snapshot holding the bundles of `packages` into `blob` (fails loudly). */
function buildSnapshot(blob: string, packages: { name: string; dist: string }[]): void {
  const builder = join(repo, 'packages/core/scripts/startup-snapshot.cjs');
  const built = spawnSync(
    process.execPath,
    ['--snapshot-blob', blob, '--build-snapshot', builder],
    {
      env: {
        ...process.env,
        SSI_CODE_CACHE: 'off',
        SSI_SNAPSHOT_PACKAGES: JSON.stringify(packages),
      },
      encoding: 'utf8',
      timeout: 60_000,
    },
  );
  expect(built.status, built.stderr).toBe(0);
}

describe('start-up bundles', () => {
  it('load each package once per process, shared by the MPI layer and the plugins', () => {
    const seen = probe('off');
    const files = seen.bundles.map((b) => b.file).sort();
    expect(files).toEqual(BUNDLED.map((d) => join(repo, d, 'dist/ssi-bundle.cjs')).sort());
    expect(seen.sameCore).toBe(true);
    expect(seen.mpiErrorIsSsiError).toBe(true);
    expect(seen.lamLoaded).toBe(true);
    expect(cacheStates(seen)).toEqual(['off']);
  });

  it('write a code cache once, then use it; a cache V8 rejects is replaced', () => {
    const dir = join(work, 'cache');
    expect(cacheStates(probe(dir))).toEqual(['written']);
    const files = readdirSync(dir).filter((f) => f.endsWith('.v8cache'));
    expect(files).toHaveLength(BUNDLED.length);
    expect(cacheStates(probe(dir))).toEqual(['used']);

    for (const f of files) writeFileSync(join(dir, f), Buffer.alloc(64, 7)); // not a V8 cache
    expect(cacheStates(probe(dir))).toEqual(['rejected']);
    expect(cacheStates(probe(dir))).toEqual(['used']);
  });

  it('keep the cache beside each package by default, out of dist and out of the temp directory', () => {
    const seen = probe(null);
    expect(cacheStates(seen).every((c) => c === 'written' || c === 'used')).toBe(true);
    for (const d of BUNDLED) {
      const dir = join(repo, d, '.ssi-code-cache');
      expect(
        readdirSync(dir).some((f) => f.endsWith('.v8cache')),
        dir,
      ).toBe(true);
      expect(existsSync(join(repo, d, 'dist', '.ssi-code-cache'))).toBe(false);
    }
    const uid = process.getuid?.() ?? 0;
    expect(existsSync(join(tmpdir(), `ssi-code-cache-${uid}`))).toBe(false);
  });

  it('take no cache from a directory that others may write to', () => {
    const dir = join(work, 'shared');
    rmSync(dir, { recursive: true, force: true });
    expect(cacheStates(probe(dir))).toEqual(['written']);
    chmodSync(dir, 0o777);
    expect(cacheStates(probe(dir))).toEqual(['off']);
    expect(existsSync(dir)).toBe(true);
  });

  it('are Latin-1 text: V8 keeps their source one byte a character', () => {
    // One character beyond Latin-1 (an arrow in a doc comment) made @ssi/mpi's 0.46 MB source a
    // two-byte string in every rank's heap and start-up snapshot.
    for (const dir of BUNDLED) {
      const source = readFileSync(join(repo, dir, 'dist/ssi-bundle.cjs'), 'utf8');
      const beyond = source.match(/[\u0100-\uffff]/);
      expect(beyond?.[0], `${dir}/dist/ssi-bundle.cjs`).toBeUndefined();
    }
  });
});

/**
 * The start-up snapshot (`@ssi/core/startup-snapshot`, mpirun's `mpi_base_startup_snapshot`): a
 * process started from it has the bundles loaded already, and behaves as one that loaded them.
 */
describe('start-up snapshot', () => {
  /**
   * BUNDLED with sockopt (which rpi-tcp imports), each after the packages it requires (sched
   * before mpi, which imports it).
   */
  const SNAPSHOT = [
    'packages/core',
    'packages/sockopt',
    'packages/sched',
    ...BUNDLED.slice(1).filter((d) => d !== 'packages/sched'),
  ];
  const packages = SNAPSHOT.map((d) => ({
    name: `@ssi/${d.split('/')[1]}`,
    dist: join(repo, d, 'dist'),
  }));

  it('starts a process with every bundle loaded, one copy each, and imports through them', () => {
    const blob = join(work, 'startup.blob');
    buildSnapshot(blob, packages);
    const program = join(work, 'probe.mjs');
    // The probe, and an import() the core bundle makes (a module's entry, as MPI.init loads it).
    writeFileSync(
      program,
      `${PROBE}
const found = core.discoverModules({ searchFrom: [${JSON.stringify(repo)}] }).modules;
const record = found.find((r) => r.type === 'coll' && r.name === 'lam_basic');
const m = await core.loadModule(record);
const inSnapshot = [...loaded.entries()].map(([file, b]) => [file, b.inSnapshot]);
console.log(JSON.stringify({ module: m.name, inSnapshot, argv: process.argv.slice(1) }));
`,
    );
    // A relative program path, as `node probe.mjs` is given one: run as the absolute path.
    const r = spawnSync(process.execPath, ['--snapshot-blob', blob, 'probe.mjs', 'a', 'b'], {
      cwd: work,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const [seenLine, extraLine] = r.stdout.trim().split('\n').slice(-2);
    const seen = JSON.parse(seenLine!) as Probe;
    expect(seen.sameCore).toBe(true);
    expect(seen.mpiErrorIsSsiError).toBe(true);
    expect(seen.lamLoaded).toBe(true);
    const extra = JSON.parse(extraLine!) as {
      module: string;
      inSnapshot: [string, boolean][];
      argv: string[];
    };
    expect(extra.module).toBe('lam_basic');
    expect(extra.argv).toEqual([program, 'a', 'b']);
    const expected = SNAPSHOT.map((d) => [join(repo, d, 'dist/ssi-bundle.cjs'), true]);
    const loadedNow = [join(repo, 'plugins/coll-lam-basic/dist/ssi-bundle.cjs'), false];
    expect(extra.inSnapshot.sort()).toEqual([...expected, loadedNow].sort());
  });

  it("opens a module whose bundle it holds from the bundle, not its façade; the bundle's own import() still resolves from its package", () => {
    // A module package of the snapshot whose façade must never run, and whose bundle imports a
    // package only its own node_modules has (as rpi-tcp imports @ssi/sockopt).
    const app = join(work, 'app');
    const pkg = join(app, 'node_modules', 'fake-coll');
    const dist = join(pkg, 'dist');
    const dep = join(pkg, 'node_modules', 'fake-dep');
    for (const d of [dist, dep]) mkdirSync(d, { recursive: true });
    const coreDist = join(repo, 'packages/core/dist');
    const coreUrl = pathToFileURL(join(coreDist, 'index.js')).href;
    const collApi = spawnSync(
      process.execPath,
      [
        '-e',
        `import('${coreUrl}').then((c) => console.log(c.formatVersion(c.frameworkApi('coll'))))`,
      ],
      { encoding: 'utf8' },
    ).stdout.trim();
    const entry = { type: 'coll', name: 'fake', typeApi: collApi, entry: './dist/index.js' };
    writeFileSync(
      join(pkg, 'package.json'),
      JSON.stringify({ name: 'fake-coll', version: '1.0.0', ssi: { modules: [entry] } }),
    );
    writeFileSync(join(dist, 'index.js'), "throw new Error('the façade was imported');\n");
    writeFileSync(
      join(dist, 'ssi-load.cjs'),
      `const { door } = globalThis[Symbol.for('@ssi/start-up-bundles.loader')];\nmodule.exports = door(__dirname, (s) => import(s), 'fake-coll');\n`,
    );
    writeFileSync(
      join(dist, 'ssi-bundle.cjs'),
      `module.exports = { 'index.js': { default: { ssiApi: '1.0.0', type: 'coll', typeApi: ${JSON.stringify(collApi)},
        name: 'fake', version: '1.0.0', viaOwnImport: () => __ssiI('fake-dep') } } };\n`,
    );
    writeFileSync(
      join(dep, 'package.json'),
      JSON.stringify({ name: 'fake-dep', main: 'index.mjs' }),
    );
    writeFileSync(join(dep, 'index.mjs'), "export const where = 'fake-coll/node_modules';\n");

    const blob = join(work, 'module.blob');
    const packages = [
      { name: '@ssi/core', dist: coreDist },
      { name: 'fake-coll', dist },
    ];
    buildSnapshot(blob, packages);
    const program = join(work, 'open-module.mjs');
    writeFileSync(
      program,
      `const loaded = globalThis[Symbol.for('@ssi/start-up-bundles')];
const core = loaded.get(${JSON.stringify(join(coreDist, 'ssi-bundle.cjs'))}).exports['index.js'];
const record = core.discoverModules({ searchFrom: [${JSON.stringify(app)}] }).modules.find((r) => r.name === 'fake');
const m = await core.loadModule(record);
const dep = await m.viaOwnImport();
console.log(JSON.stringify({ name: m.name, where: dep.where }));
`,
    );
    const r = spawnSync(process.execPath, ['--snapshot-blob', blob, program], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toEqual({
      name: 'fake',
      where: 'fake-coll/node_modules',
    });
  });

  it("finds no per-process state (environment, pid, host, clocks, timers) read by the bundles' top level", () => {
    // What a snapshot keeps from its build: the bundles are loaded as the builder loads them,
    // with every such read recorded.
    const audit = `
const reads = new Set();
const note = (what) => reads.add(what);
process.env = new Proxy(process.env, { get(t, k) { if (typeof k === 'string' && k !== 'SSI_CODE_CACHE') note('env.' + k); return t[k]; } });
const os = require('node:os');
for (const f of ['hostname', 'cpus', 'tmpdir', 'homedir', 'userInfo', 'networkInterfaces', 'availableParallelism']) {
  const o = os[f]; os[f] = (...a) => { note('os.' + f); return o(...a); };
}
const now = Date.now; Date.now = () => { note('Date.now'); return now(); };
const pnow = performance.now.bind(performance); performance.now = () => { note('performance.now'); return pnow(); };
const crypto = require('node:crypto'); const rb = crypto.randomBytes; crypto.randomBytes = (...a) => { note('randomBytes'); return rb(...a); };
const pid = process.pid; Object.defineProperty(process, 'pid', { get() { note('process.pid'); return pid; } });
const hr = process.hrtime; process.hrtime = Object.assign((...a) => { note('hrtime'); return hr(...a); }, { bigint: () => { note('hrtime'); return hr.bigint(); } });
for (const t of ['setTimeout', 'setInterval', 'setImmediate']) { const o = globalThis[t]; globalThis[t] = (...a) => { note(t); return o(...a); }; }
for (const m of ['on', 'once', 'addListener', 'prependListener']) { const o = process[m]; process[m] = function (...a) { note('process.' + m + '(' + String(a[0]) + ')'); return o.apply(this, a); }; }
require(${JSON.stringify(join(repo, 'packages/core/scripts/bundle-loader.cjs'))}).preloadForSnapshot(${JSON.stringify(packages)}, require);
console.log(JSON.stringify([...reads]));
`;
    const r = spawnSync(process.execPath, ['-e', audit], {
      env: { ...process.env, SSI_CODE_CACHE: 'off' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toEqual([]);
  });
});
