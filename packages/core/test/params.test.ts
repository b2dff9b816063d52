import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ParamRegistry, parseSsiArgs, readParamFile, SsiError } from '../src/index';
import { tempDir } from './fixtures';

const noFile = { path: '/nonexistent/params.conf', found: false, values: new Map() };
const shortSpec = { type: 'int' as const, default: 65536, help: 'eager limit' };

describe('parameters', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('takes --ssi over the environment over the parameter file over the default, and says which', () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const file = join(t.dir, 'params.conf');
    writeFileSync(file, '# tuning\nrpi_tcp_short = 100\nrpi_tcp_sockbuf 4096\ncoll_crossover=8\n');
    const env = {
      SSI_PARAM_FILE: file,
      LAM_MPI_SSI_rpi_tcp_short: '200',
      LAM_MPI_SSI_rpi_tcp_sockbuf: '8192',
    };
    const params = new ParamRegistry({ commandLine: { rpi_tcp_short: '300' }, env });
    params.register('rpi_tcp_short', shortSpec, 'rpi tcp');
    params.register('rpi_tcp_sockbuf', { type: 'int', default: 0, help: 'buf' }, 'rpi tcp');
    params.register('coll_crossover', { type: 'int', default: 4, help: 'x' }, 'coll');
    params.register('coll_reduce_crossover', { type: 'int', default: 4, help: 'x' }, 'coll');

    expect(params.lookup('rpi_tcp_short')).toMatchObject({
      value: 300,
      source: 'command line',
      origin: '--ssi',
    });
    expect(params.lookup('rpi_tcp_sockbuf')).toMatchObject({
      value: 8192,
      source: 'environment',
      origin: 'LAM_MPI_SSI_rpi_tcp_sockbuf',
    });
    expect(params.lookup('coll_crossover')).toMatchObject({
      value: 8,
      source: 'parameter file',
      origin: `${file}:4`,
    });
    expect(params.lookup('coll_reduce_crossover')).toMatchObject({ value: 4, source: 'default' });
  });

  it('serialises every explicitly set value so a launcher can hand them on', () => {
    const params = new ParamRegistry({
      commandLine: { rpi: 'tcp', rpi_tcp_short: '300' },
      env: { LAM_MPI_SSI_coll: 'smp', PATH: '/bin' },
      paramFile: noFile,
    });
    expect(params.toEnvironment()).toEqual({
      LAM_MPI_SSI_coll: 'smp',
      LAM_MPI_SSI_rpi: 'tcp',
      LAM_MPI_SSI_rpi_tcp_short: '300',
    });
    const remote = new ParamRegistry({ env: params.toEnvironment(), paramFile: noFile });
    remote.register('rpi_tcp_short', shortSpec);
    expect(remote.get('rpi_tcp_short')).toBe(300);
  });

  it('rejects a non-integer value for an int parameter, naming the parameter, the value and its source', () => {
    const params = new ParamRegistry({
      commandLine: { rpi_tcp_short: '64k' },
      env: {},
      paramFile: noFile,
    });
    expect(() => params.register('rpi_tcp_short', shortSpec)).toThrow(
      'parameter rpi_tcp_short expects an integer, but the command line (--ssi) gives "64k"',
    );
  });

  it('reads booleans in the usual spellings and rejects others', () => {
    const params = new ParamRegistry({
      env: { LAM_MPI_SSI_a_b_on: 'yes', LAM_MPI_SSI_a_b_off: '0', LAM_MPI_SSI_a_b_bad: 'maybe' },
      paramFile: noFile,
    });
    params.register('a_b_on', { type: 'boolean', default: false, help: '' });
    params.register('a_b_off', { type: 'boolean', default: true, help: '' });
    expect(params.get('a_b_on')).toBe(true);
    expect(params.get('a_b_off')).toBe(false);
    expect(() => params.register('a_b_bad', { type: 'boolean', default: true, help: '' })).toThrow(
      /expects a boolean/,
    );
  });

  it('refuses a default of the wrong type and conflicting registrations', () => {
    const params = new ParamRegistry({ env: {}, paramFile: noFile });
    expect(() => params.register('x_y_z', { type: 'int', default: '3', help: '' })).toThrow(
      /declared int but its default/,
    );
    params.register('x_y_s', { type: 'string', default: 'a', help: '' }, 'x y');
    expect(() => params.register('x_y_s', { type: 'int', default: 1, help: '' }, 'x w')).toThrow(
      /registered twice/,
    );
  });

  it('names the source a launcher forwarded a value from (SSI_PARAM_ORIGINS), not the environment', () => {
    const params = new ParamRegistry({
      env: {
        LAM_MPI_SSI_rpi_tcp_short: 'abc',
        LAM_MPI_SSI_rpi_tcp_other: '7',
        SSI_PARAM_ORIGINS: JSON.stringify({
          rpi_tcp_short: { source: 'command line', origin: '--ssi' },
        }),
      },
      paramFile: noFile,
    });
    expect(() => params.register('rpi_tcp_short', shortSpec)).toThrow(
      'parameter rpi_tcp_short expects an integer, but the command line (--ssi) gives "abc"',
    );
    params.register('rpi_tcp_other', shortSpec);
    expect(params.lookup('rpi_tcp_other')).toMatchObject({
      source: 'environment',
      origin: 'LAM_MPI_SSI_rpi_tcp_other',
    });
    expect(
      () => new ParamRegistry({ env: { SSI_PARAM_ORIGINS: '{oops' }, paramFile: noFile }),
    ).toThrow('SSI_PARAM_ORIGINS is not the JSON a launcher writes: {oops');
  });
});

describe('the parameter file', () => {
  let cleanup = () => {};
  afterEach(() => cleanup());

  it('is optional at the default place but required when SSI_PARAM_FILE names it', () => {
    expect(readParamFile('/nonexistent/params.conf', false).found).toBe(false);
    expect(() => new ParamRegistry({ env: { SSI_PARAM_FILE: '/nonexistent/p.conf' } })).toThrow(
      'parameter file /nonexistent/p.conf does not exist; fix it or unset SSI_PARAM_FILE',
    );
  });

  it('reports a file that cannot be read and a line that cannot be parsed, with file and line', () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const asDir = join(t.dir, 'isdir');
    mkdirSync(asDir);
    expect(() => readParamFile(asDir, true)).toThrow(/is a directory/);
    const bad = join(t.dir, 'bad.conf');
    writeFileSync(bad, 'ok_param = 1\n\n= oops\n');
    expect(() => readParamFile(bad, true)).toThrow(`${bad}:3: cannot parse "= oops"`);
  });

  it('is read from $HOME/.ssi/params.conf by default', () => {
    const t = tempDir();
    cleanup = t.cleanup;
    mkdirSync(join(t.dir, '.ssi'));
    writeFileSync(join(t.dir, '.ssi', 'params.conf'), 'coll_crossover 16\n');
    const params = new ParamRegistry({ env: { HOME: t.dir } });
    params.register('coll_crossover', { type: 'int', default: 4, help: '' });
    expect(params.lookup('coll_crossover')).toMatchObject({ value: 16, source: 'parameter file' });
  });
});

describe('--ssi arguments', () => {
  it('takes --ssi pairs out of a command line and keeps the rest in order', () => {
    const { settings, rest } = parseSsiArgs([
      '-np',
      '4',
      '--ssi',
      'rpi',
      'tcp',
      'app.js',
      '--ssi',
      'x',
      'y',
    ]);
    expect([...settings]).toEqual([
      ['rpi', 'tcp'],
      ['x', 'y'],
    ]);
    expect(rest).toEqual(['-np', '4', 'app.js']);
  });

  it('leaves the launched program its own arguments', () => {
    const { settings, rest } = parseSsiArgs(
      ['--ssi', 'rpi', 'tcp', 'app.js', '--ssi', 'x', 'y'],
      3,
    );
    expect([...settings.keys()]).toEqual(['rpi']);
    expect(rest).toEqual(['app.js', '--ssi', 'x', 'y']);
  });

  it('says exactly what is missing', () => {
    expect(() => parseSsiArgs(['--ssi', 'rpi'])).toThrow(
      '--ssi rpi is missing its value: --ssi rpi <value>',
    );
    expect(() => parseSsiArgs(['--ssi'])).toThrow('--ssi needs a name and a value');
    expect(() => parseSsiArgs(['--ssi', '-np', '4'])).toThrow(SsiError);
  });
});
