import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSsiContext, isSsiError } from '@ssi/core';
import { afterAll, describe, expect, it } from 'vitest';
import type { CollComm } from '../src/coll/coll-comm';
import { CollFramework, collFunction } from '../src/coll/framework';
import { localityOf } from '../src/coll/locality';
import type { CollModule } from '../src/coll/types';
import { ErrorClass, MpiError } from '../src/errors';
import { Proc } from '../src/proc';

/**
 * The coll framework's selection around lam_basic, in one process: a "picky" module that only
 * serves communicators it likes, a stand-in lam_basic, and communicators reduced to what the
 * framework and the modules read (a name). The same behaviour on real processes is in
 * plugins/coll-lam-basic/test/last-candidate.test.ts.
 */

// Discovery searches node_modules upward from here: an empty directory finds no installed module,
// so exactly the static modules below exist.
const nowhere = mkdtempSync(join(tmpdir(), 'ssi-coll-selection-'));
afterAll(() => rmSync(nowhere, { recursive: true, force: true }));

function coll(name: string, extra: Partial<CollModule>): CollModule {
  return {
    ssiApi: '1.0.0',
    type: 'coll',
    typeApi: '1.1.0',
    name,
    version: '1.0.0',
    query: () => ({ priority: 50 }),
    init: () => ({}),
    ...extra,
  };
}

const noop = async () => {};

/** Serves only communicators whose name starts with "wide"; implements bcast only. */
const picky = coll('picky', {
  query: (comm) => (comm.name.startsWith('wide') ? { priority: 80 } : 'only wide communicators'),
  init: () => ({ bcast: noop }),
});

/** Stands in for lam_basic: serves everything, implements barrier and bcast. */
const basic = coll('lam_basic', {
  query: () => ({ priority: 10 }),
  init: () => ({ barrier: noop, bcast: noop }),
});

const comm = (name: string) => ({ name }) as unknown as CollComm;

function framework(ssi: Record<string, string>, modules: CollModule[]) {
  const lines: string[] = [];
  const argv = Object.entries(ssi).flatMap(([k, v]) => ['--ssi', k, v]);
  const ctx = createSsiContext({ argv, env: {}, searchFrom: [nowhere], staticModules: modules });
  return { fw: new CollFramework(ctx, (line) => lines.push(line)), lines };
}

async function selectionError(p: Promise<unknown>): Promise<Error> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  if (!err) throw new Error('expected the selection to fail, it succeeded');
  return err;
}

describe('lam_basic, the last coll candidate', () => {
  it('serves a communicator every listed module declines (--ssi coll picky), and says why', async () => {
    const { fw, lines } = framework({ coll: 'picky', coll_verbose: '0' }, [picky, basic]);
    const self = await fw.select(comm('COMM_SELF'));
    expect(self.module).toBe('lam_basic');
    expect(self.providers).toEqual({ barrier: 'lam_basic', bcast: 'lam_basic' });
    expect(lines.join('\n')).toContain(
      'COMM_SELF: selected coll module lam_basic as the last candidate: every module ' +
        '--ssi coll picky allows declined (picky: only wide communicators)',
    );
    await fw.close();
  });

  it('still fills in what the selected module leaves out', async () => {
    const { fw } = framework({ coll: 'picky' }, [picky, basic]);
    const wide = await fw.select(comm('wide world'));
    expect(wide.module).toBe('picky');
    expect(wide.providers).toEqual({ bcast: 'picky', barrier: 'lam_basic' });
    expect(wide.noFallback).toBeUndefined();
    await fw.close();
  });

  it('--ssi coll ^lam_basic: no last candidate and no filling in, with errors that say so', async () => {
    const { fw } = framework({ coll: '^lam_basic' }, [picky, basic]);
    const err = await selectionError(fw.select(comm('COMM_SELF')));
    expect(isSsiError(err) && err.code).toBe('NONE_AVAILABLE');
    expect(err.message).toContain('picky: declined: only wide communicators');
    expect(err.message).toContain(
      'lam_basic, the last candidate, is excluded (--ssi coll ^lam_basic)',
    );
    const wide = await fw.select(comm('wide world'));
    expect(wide.providers).toEqual({ bcast: 'picky' });
    let thrown: unknown;
    try {
      collFunction(wide, 'barrier', comm('wide world'));
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(MpiError);
    expect((thrown as MpiError).errorClass).toBe(ErrorClass.ERR_OTHER);
    expect((thrown as MpiError).message).toBe(
      'no coll module provides barrier on wide world: the selected module picky does not, ' +
        'and lam_basic is excluded (--ssi coll ^lam_basic)',
    );
    await fw.close();
  });

  it('lam_basic not installed: the selection error lists the declines and names the package', async () => {
    for (const ssi of [{ coll: 'picky' }, {}] as Record<string, string>[]) {
      const { fw } = framework(ssi, [picky]);
      const err = await selectionError(fw.select(comm('COMM_SELF')));
      expect(err.message).toContain('picky: declined: only wide communicators');
      expect(err.message).toContain(
        'lam_basic, the last candidate, is not installed (npm install @ssi/coll-lam-basic)',
      );
      const wide = await fw.select(comm('wide world'));
      expect(() => collFunction(wide, 'barrier', comm('wide world'))).toThrow(
        'and lam_basic is not installed (npm install @ssi/coll-lam-basic)',
      );
      await fw.close();
    }
  });

  it('a listed module that is not installed stays an error, never silently lam_basic', async () => {
    const { fw } = framework({ coll: 'smp' }, [picky, basic]);
    const err = await selectionError(fw.select(comm('COMM_WORLD')));
    expect(isSsiError(err) && err.code).toBe('NOT_FOUND');
    expect(err.message).toContain('coll module "smp" requested (--ssi coll smp) but not installed');
    await fw.close();
  });

  it('lam_basic listed and declining too: the error says the last candidate declined', async () => {
    const shy = coll('lam_basic', { query: () => 'not today' });
    const { fw } = framework({ coll: 'picky,lam_basic' }, [picky, shy]);
    const err = await selectionError(fw.select(comm('COMM_SELF')));
    expect(err.message).toContain('lam_basic: declined: not today');
    expect(err.message).toContain('lam_basic, the last candidate, declined too.');
    await fw.close();
  });
});

describe('node locality of a group', () => {
  const procsOn = (nodeIds: number[]) =>
    nodeIds.map(
      (node, grank) => new Proc({ node, pid: 1000 + grank, index: grank, grank }, 'h', 'h'),
    );

  it('groups ranks by node, nodes numbered in the order of their lowest rank', () => {
    const procs = procsOn([5, 3, 5, 3, 7]);
    const at3 = localityOf(procs, 3);
    expect(at3.nodes).toEqual([[0, 2], [1, 3], [4]]);
    expect(at3.leaders).toEqual([0, 1, 4]);
    expect([0, 1, 2, 3, 4].map((r) => at3.nodeOf(r))).toEqual([0, 1, 0, 1, 2]);
    expect(at3.node).toBe(1);
    expect(at3.localRanks).toEqual([1, 3]);
    expect(at3.localRank).toBe(1);
    expect(at3.isLeader).toBe(false);
    expect(at3.singleNode).toBe(false);
    const at4 = localityOf(procs, 4);
    expect([at4.node, at4.localRanks, at4.localRank, at4.isLeader]).toEqual([2, [4], 0, true]);
  });

  it('one node: singleNode, every rank local, rank 0 leads', () => {
    const loc = localityOf(procsOn([2, 2, 2]), 1);
    expect(loc.singleNode).toBe(true);
    expect(loc.nodes).toEqual([[0, 1, 2]]);
    expect(loc.localRanks).toEqual([0, 1, 2]);
    expect(loc.leaders).toEqual([0]);
  });

  it('nodeOf of a rank outside the group is an ERR_RANK error naming the valid ranks', () => {
    const loc = localityOf(procsOn([0, 1]), 0);
    expect(() => loc.nodeOf(2)).toThrow('locality.nodeOf: invalid rank 2; the group has ranks 0-1');
  });
});
