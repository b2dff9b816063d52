import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SsiModule } from '../src/index';
import {
  checkAgreement,
  discoverModules,
  Framework,
  ParamRegistry,
  parseSelector,
  selectModule,
} from '../src/index';
import { tempDir, writeModulePackage } from './fixtures';

const noFile = { path: '/nonexistent', found: false, values: new Map() };
type Q = { priority: number } | null | string;
const candidate = (name: string, answer: Q) => ({ name, module: { answer } });
const query = (m: { answer: Q }) => m.answer;

function params(commandLine: Record<string, string> = {}) {
  return new ParamRegistry({ commandLine, env: {}, paramFile: noFile });
}

describe('selection', () => {
  it('picks the highest priority, breaking ties by name so every process agrees', async () => {
    const base = {
      type: 'rpi',
      selector: 'rpi',
      request: parseSelector(undefined),
      params: params(),
      query,
    };
    const sel = await selectModule({
      ...base,
      candidates: [
        candidate('tcp', { priority: 20 }),
        candidate('sm', { priority: 50 }),
        candidate('gm', { priority: 50 }),
      ],
    });
    expect(sel.name).toBe('gm');
    expect(sel.ranking.map((r) => r.name)).toEqual(['gm', 'sm', 'tcp']);
  });

  it('honours include and exclude lists', async () => {
    const candidates = [candidate('tcp', { priority: 20 }), candidate('sm', { priority: 50 })];
    const base = { type: 'rpi', selector: 'rpi', params: params(), query, candidates };
    expect((await selectModule({ ...base, request: parseSelector('^sm') })).name).toBe('tcp');
    expect((await selectModule({ ...base, request: parseSelector('tcp') })).name).toBe('tcp');
    expect(() => parseSelector('tcp,^sm', 'rpi')).toThrow(/is not a module list/);
  });

  it('lets a user-set <type>_<name>_priority override what the module answers', async () => {
    const p = params({ rpi_tcp_priority: '90' });
    p.register('rpi_tcp_priority', { type: 'int', default: 0, help: '' });
    const sel = await selectModule({
      type: 'rpi',
      selector: 'rpi',
      request: parseSelector(undefined),
      params: p,
      query,
      candidates: [candidate('tcp', { priority: 20 }), candidate('sm', { priority: 50 })],
    });
    expect(sel.name).toBe('tcp');
    expect(sel.answer.priority).toBe(90);
  });

  it('explains a request for a module that is not installed, listing what is and why each declined', async () => {
    const attempt = selectModule({
      type: 'rpi',
      selector: 'rpi',
      request: parseSelector('myrinet'),
      params: params(),
      query,
      candidates: [
        candidate('tcp', { priority: 20 }),
        candidate('sm', 'no shared memory here'),
        { name: 'old', unavailable: 'needs rpi API 2.0' },
      ],
    });
    await expect(attempt).rejects.toThrow(
      [
        'rpi module "myrinet" requested (--ssi rpi myrinet) but not installed.',
        'Installed rpi modules:',
        '  tcp: installed, not requested',
        '  sm: installed, not requested',
        '  old: unavailable: needs rpi API 2.0',
      ].join('\n'),
    );
  });

  it('fails when the requested module declines, with its reason, and when nothing can run', async () => {
    const candidates = [
      candidate('tcp', { priority: 20 }),
      candidate('sm', 'no shared memory here'),
      candidate('bad', { priority: 500 }),
    ];
    const base = { type: 'rpi', selector: 'rpi', params: params(), query, candidates };
    await expect(selectModule({ ...base, request: parseSelector('sm') })).rejects.toThrow(
      /no rpi module can run here \(--ssi rpi sm\)\.[\s\S]* {2}sm: declined: no shared memory here/,
    );
    await expect(selectModule({ ...base, request: parseSelector('^tcp') })).rejects.toThrow(
      / {2}bad: declined: invalid priority 500 \(from its query\); priorities are integers 0-100/,
    );
  });
});

describe('the framework life cycle', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('opens allowed modules with their parameters, drops the ones that decline, selects and closes', async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const log = join(t.dir, 'log.txt');
    const body = (name: string, open: string) => `
      params: { short: { type: 'int', default: 1024, help: 'eager limit' } },
      open(ctx) { ${open} },
      close() { appendFileSync(${JSON.stringify(log)}, 'close ${name}\\n'); },
      query() { return { priority: 10 }; },`;
    const prelude = "import { appendFileSync } from 'node:fs';";
    writeModulePackage(join(t.dir, 'drop', 'a'), 'a', [
      {
        type: 'rpi',
        name: 'alpha',
        prelude,
        body: body('alpha', "ctx.register('extra', { type: 'string', default: 'x', help: 'h' });"),
      },
    ]);
    writeModulePackage(join(t.dir, 'drop', 'b'), 'b', [
      { type: 'rpi', name: 'beta', prelude, body: body('beta', "return 'no hardware';") },
    ]);
    writeModulePackage(join(t.dir, 'drop', 'c'), 'c', [
      { type: 'rpi', name: 'gamma', prelude, body: body('gamma', '') },
    ]);
    const discovery = discoverModules({ modulePath: [join(t.dir, 'drop')] });
    const p = new ParamRegistry({
      commandLine: { rpi: '^gamma', rpi_alpha_short: '77' },
      env: {},
      paramFile: noFile,
    });
    const fw = new Framework<SsiModule & { query(): { priority: number } }>('rpi', {
      params: p,
      discovery,
      write: () => {},
    });
    const opened = await fw.open();
    expect(opened.map((o) => [o.record.name, o.available ? 'available' : o.reason])).toEqual([
      ['alpha', 'available'],
      ['beta', 'no hardware'],
    ]);
    expect(p.lookup('rpi_alpha_short')).toMatchObject({ value: 77, source: 'command line' });
    expect(p.get('rpi_alpha_extra')).toBe('x');
    expect(p.lookup('rpi_alpha_priority')).toMatchObject({ value: 0, source: 'default' });
    const sel = await fw.select((m) => m.query());
    expect(sel.name).toBe('alpha');
    await fw.close();
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(log, 'utf8')).toBe('close beta\nclose alpha\n');
  });

  it('rejects a module object that does not match its manifest', async () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const dir = writeModulePackage(join(t.dir, 'drop', 'liar'), 'liar', [
      { type: 'rpi', name: 'liar' },
    ]);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      join(dir, 'rpi-liar.js'),
      "export default { ssiApi: '1.0.0', type: 'rpi', typeApi: '1.0.0', name: 'liar', version: '1.0.0' };",
    );
    const discovery = discoverModules({ modulePath: [join(t.dir, 'drop')] });
    const fw = new Framework('rpi', { params: params(), discovery, write: () => {} });
    await expect(fw.open()).rejects.toThrow(
      /manifest declares rpi API 2.0.0 but the module object says 1.0.0; rebuild the package/,
    );
  });
});

describe('agreement between processes', () => {
  const sel = (who: string, version: string, name = 'tcp') => ({
    who,
    modules: { rpi: { name, version, origin: 'node_modules' } },
  });

  it('accepts the same name and major.minor, ignoring the release number', () => {
    expect(() => checkAgreement([sel('rank 0', '1.2.0'), sel('rank 1', '1.2.9')])).not.toThrow();
  });

  it('names the processes that differ and what each selected', () => {
    expect(() =>
      checkAgreement([sel('rank 0', '1.2.0'), sel('rank 1', '1.2.0'), sel('rank 2', '1.3.0')]),
    ).toThrow(
      'processes disagree on the rpi module (name and major.minor must match):\n  rank 0: tcp 1.2.0 (node_modules)\n  rank 2: tcp 1.3.0 (node_modules)',
    );
    expect(() => checkAgreement([sel('rank 0', '1.2.0'), sel('rank 1', '1.2.0', 'sm')])).toThrow(
      /rank 1: sm 1.2.0/,
    );
  });
});
