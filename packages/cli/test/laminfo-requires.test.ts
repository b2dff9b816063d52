import { parseManifest } from '@ssi/core';
import { describe, expect, it } from 'vitest';
import { moduleInfo, moduleLine } from '../src/laminfo/list-modules';

describe('laminfo and module requirements', () => {
  it('shows what a module requires under its line, read from the manifest only', () => {
    const [entry] = parseManifest(
      {
        name: '@ssi/rpi-crtcp',
        version: '1.0.0',
        ssi: {
          modules: [
            {
              type: 'rpi',
              name: 'crtcp',
              typeApi: '1.1.0',
              entry: './dist/index.js',
              requires: [{ type: 'rpi', name: 'tcp', version: '1.0', package: '@ssi/rpi-tcp' }],
            },
          ],
        },
      },
      'package.json',
    ).modules;
    const record = { ...entry!, origin: 'node_modules' as const, location: '/x/rpi-crtcp' };
    const info = moduleInfo(record);
    expect(info.requires).toEqual(['rpi module tcp 1.x (≥ 1.0)']);
    expect(moduleLine(info, true).split('\n')).toEqual([
      '             SSI rpi: crtcp (SSI v1.0.0, API v1.1.0, Module v1.0.0) [node_modules: /x/rpi-crtcp]',
      '                      requires rpi module tcp 1.x (≥ 1.0)',
    ]);
    expect(moduleLine(moduleInfo({ ...record, requires: [] }), true)).not.toContain('requires');
  });
});
