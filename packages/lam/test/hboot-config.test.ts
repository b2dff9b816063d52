import { describe, expect, it } from 'vitest';
import { checkLamdConfig, parseHbootConfig } from '../src/hboot/hboot-config';

/** What lamboot hands a lamd on hboot's stdin, valid. */
const valid = () => ({
  nodeId: 0,
  nodeName: 'n0',
  address: '127.0.0.1',
  port: 0,
  cpus: 2,
  schedulable: true,
  origin: true,
  secret: 'ab'.repeat(32),
  rendezvous: { host: '127.0.0.1', port: 4000 },
  bootTimeout: 30,
  ssiEnv: {},
  debug: false,
});

describe('the lamd configuration (hboot stdin)', () => {
  it('accepts a whole configuration, with or without the process the universe belongs to', () => {
    expect(checkLamdConfig(valid()).nodeName).toBe('n0');
    const owned = { ...valid(), owner: { pid: 1234, startTime: '5678' } };
    expect(checkLamdConfig(owned).owner).toEqual({ pid: 1234, startTime: '5678' });
  });

  it('names every bad or missing field', () => {
    const bad = { ...valid(), port: 70000, secret: 'short', owner: { pid: -1 } };
    expect(() => checkLamdConfig(bad)).toThrow(
      'lamd configuration is missing or has bad port, secret, owner',
    );
    expect(() => checkLamdConfig({ ...valid(), owner: { pid: 5, startTime: 7 } })).toThrow(
      /has bad owner$/,
    );
  });

  it('refuses what is not a boot configuration at all', () => {
    expect(() => parseHbootConfig('hello')).toThrow(/expected one JSON line from lamboot/);
    expect(() => parseHbootConfig('{"mode":"dance"}')).toThrow(/unknown or incomplete/);
  });
});
