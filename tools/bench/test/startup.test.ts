import { describe, expect, it } from 'vitest';
import {
  firstVariantsFor,
  ompiStartupFlags,
  parseFirstOutput,
  parseStartupOutput,
  planStartup,
} from '../src/commands/startup';

const line = (rank: number, size: number, sum = (size * (size - 1)) / 2, rssKiB = 61_000) =>
  `[${rank}] STARTUP ${JSON.stringify({ rank, size, sum, rssKiB })}`;

describe('startup benchmark: plan and job output', () => {
  it('options: defaults, sorted counts, typos refused', () => {
    const p = planStartup([]);
    expect(p.nps).toEqual([1, 4, 16, 32, 64]);
    expect(p.reps).toBe(3);
    expect(p.columns).toEqual(['ompi', 'mjs', 'ts', 'ts-tsx', 'mjs-lazy', 'mjs-eager']);
    expect(p.firstNps).toEqual([2, 16]);
    const q = planStartup(['--np', '8,2,8', '--only', 'mjs-eager,ompi', '--first-np', 'none']);
    expect(q.nps).toEqual([2, 8]);
    expect(q.columns).toEqual(['ompi', 'mjs-eager']); // table order
    expect(q.firstNps).toEqual([]);
    expect(() => planStartup(['--nps', '2'])).toThrow(/unknown option --nps/);
    expect(() => planStartup(['--only', 'tsx'])).toThrow(/no column "tsx"/);
    expect(() => planStartup(['--first-np', '1'])).toThrow(/2 ranks or more/);
    expect(() => planStartup(['--np', '0'])).toThrow(/bad rank count "0"/);
  });

  it('a job: one STARTUP line per rank (mpirun-prefixed or not), checked sums', () => {
    const out = ['mpirun: warning', line(1, 3), line(0, 3).slice(4), line(2, 3)].join('\n');
    expect(parseStartupOutput(out, 3).map((l) => l.rank)).toEqual([1, 0, 2]);
    expect(() => parseStartupOutput([line(0, 2)].join('\n'), 2)).toThrow(
      /expected 2 results, got 1/,
    );
    expect(() => parseStartupOutput([line(0, 2), line(0, 2)].join('\n'), 2)).toThrow(/ranks 0..1/);
    expect(() => parseStartupOutput([line(0, 2, 5), line(1, 2)].join('\n'), 2)).toThrow(
      /allreduce sum 5, expected 1/,
    );
    expect(() => parseStartupOutput([line(0, 2), line(1, 2, 1, 0)].join('\n'), 2)).toThrow(
      /no RSS/,
    );
    expect(() => parseStartupOutput('[0] STARTUP {"rank":"a"}', 1)).toThrow(/malformed/);
  });

  it('first-message line, and Open MPI flags', () => {
    const f = parseFirstOutput(
      '[0] FIRST {"variant":"any","firstNs":900000,"openNs":[100000,90000],"asleepNs":700000,"tcpConnectNs":80000}',
    );
    expect(f.firstNs).toBe(900000);
    expect(f.variant).toBe('any');
    expect(f.asleepNs).toBe(700000);
    expect(() =>
      parseFirstOutput(
        '[0] FIRST {"variant":"any","firstNs":900000,"openNs":[1],"tcpConnectNs":80000}',
      ),
    ).toThrow(/malformed FIRST/); // no round trip to a sleeping peer
    expect(() =>
      parseFirstOutput('[0] FIRST {"firstNs":900000,"openNs":[1],"tcpConnectNs":80000}'),
    ).toThrow(/malformed FIRST/); // no variant
    expect(() =>
      parseFirstOutput(
        '[0] FIRST {"variant":"hot","firstNs":900000,"openNs":[1],"tcpConnectNs":80000}',
      ),
    ).toThrow(/malformed FIRST/);
    expect(firstVariantsFor(3)).toEqual(['named', 'any']);
    expect(firstVariantsFor(4)).toEqual(['named', 'any', 'warm']);
    expect(firstVariantsFor(16)).toEqual(['named', 'any', 'warm']);
    expect(() => parseFirstOutput('[0] FIRST {"firstNs":0,"openNs":[],"tcpConnectNs":1}')).toThrow(
      /malformed FIRST/,
    );
    expect(ompiStartupFlags(64)).toEqual([
      '--allow-run-as-root',
      '--oversubscribe',
      '-np',
      '64',
      '--bind-to',
      'none',
    ]);
  });
});
