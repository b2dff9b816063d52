import { describe, expect, it } from 'vitest';
import { createVerboseStream, ParamRegistry } from '../src/index';

const noFile = { path: '/nonexistent', found: false, values: new Map() };

function stream(commandLine: Record<string, string>) {
  const lines: string[] = [];
  const params = new ParamRegistry({ commandLine, env: {}, paramFile: noFile });
  const v = createVerboseStream(params, 'boot', (l) => lines.push(l));
  v.log(0, 'minimal');
  v.log(10, 'detail');
  v.log(1000, 'debug');
  return lines;
}

describe('verbose streams', () => {
  it('are silent by default and below 0', () => {
    expect(stream({})).toEqual([]);
    expect(stream({ boot_verbose: '-1' })).toEqual([]);
  });

  it('print minimal output at 0 (-v) and everything at 1000 (-d)', () => {
    expect(stream({ boot_verbose: '0' })).toEqual(['[ssi boot] minimal']);
    expect(stream({ boot_verbose: '1000' })).toHaveLength(3);
  });

  it('follow ssi_verbose unless the framework has its own setting', () => {
    expect(stream({ ssi_verbose: '1000' })).toHaveLength(3);
    expect(stream({ ssi_verbose: '1000', boot_verbose: '-1' })).toEqual([]);
  });
});
