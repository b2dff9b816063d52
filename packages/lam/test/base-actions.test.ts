import { createVerboseStream, ParamRegistry } from '@ssi/core';
import { describe, expect, it } from 'vitest';
import {
  type BootActions,
  type BootContext,
  type BootNode,
  baseBootActions,
  type RteLaunch,
  registerBootBaseParams,
  registerLamParams,
} from '../src/index';

function context(): BootContext {
  const params = new ParamRegistry({ env: {} });
  registerBootBaseParams(params);
  registerLamParams(params);
  return {
    params,
    verbose: createVerboseStream(params, 'boot'),
    secret: Buffer.alloc(32, 1),
    localHost: '127.0.0.2',
    timeoutMs: 5000,
    debug: false,
    ssiEnv: {},
    warn: () => {},
  };
}

const node = (id: number): BootNode => ({
  id,
  name: `127.0.0.${id + 2}`,
  address: `127.0.0.${id + 2}`,
  cpus: 1,
  schedulable: true,
  boot: true,
  origin: id === 0,
  me: id === 0,
  keyval: {},
});

describe('baseBootActions', () => {
  it.each(['linear', 'linear_windowed'] as const)(
    'the %s algorithm calls the rendezvous actions a module spread over the base and overrode',
    async (algorithm) => {
      const launched: number[] = [];
      const base = baseBootActions({
        ctx: context(),
        algorithm,
        startRteProc: async (n: BootNode, launch: RteLaunch) => {
          expect(launch.which).toBe('lamd');
          launched.push(n.id);
          return { stdout: '', stderr: '' };
        },
      });
      const received: number[] = [];
      const mine: BootActions = {
        ...base,
        // the module learns of a call back its own way (here: at once)
        async receiveLamdInfo(nodes) {
          received.push(nodes[0]!.id);
          nodes[0]!.port = 1000 + nodes[0]!.id;
          nodes[0]!.pid = 1;
          return nodes[0]!;
        },
      };
      const nodes = [node(0), node(1), node(2)];
      await mine.openSrvConnection(nodes);
      try {
        const result = await mine.startRteProcs(nodes, 'lamd', { rendezvous: true });
        expect(result.failures).toEqual([]);
        expect(result.started).toBe(3);
      } finally {
        await mine.closeSrvConnection();
      }
      expect(launched).toEqual([0, 1, 2]);
      expect(received.sort()).toEqual([0, 1, 2]);
      expect(nodes.map((n) => n.boot)).toEqual([false, false, false]);
    },
  );
});
