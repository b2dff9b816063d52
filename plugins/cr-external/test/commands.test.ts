import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { criuCommands } from '../src/backends';
import { runDetached } from '../src/detached-command';
import { fillCommand, type ProcessPlace, placeEnv } from '../src/placeholders';

const place: ProcessPlace = {
  pid: 4242,
  rank: 3,
  node: 'n1',
  host: 'h',
  image: "/tmp/it's here/series-2/external-3/image",
  series: 2,
  job: 'j-7',
};

describe('placeholders', () => {
  it('fills every placeholder, shell-quoted', () => {
    expect(fillCommand('ck {pid} {rank} {node} {host} {image} {series} {job}', place, 'p')).toBe(
      `ck 4242 3 n1 h '/tmp/it'\\''s here/series-2/external-3/image' 2 j-7`,
    );
    expect(placeEnv(place).SSI_CR_IMAGE).toBe(place.image);
  });

  it('an unknown placeholder is an error naming it and the ones expected', () => {
    expect(() => fillCommand('ck {pdi}', place, 'crmpi_external_checkpoint_cmd')).toThrow(
      /crmpi_external_checkpoint_cmd: unknown placeholder \{pdi\}.*expected one of \{pid\} \{rank\}/,
    );
  });

  it('criu: dump leaves the process running, keeps TCP connections, restore marks the image first', () => {
    const c = criuCommands('criu', '');
    for (const opt of ['--leave-running', '--tcp-established', '--shell-job', '--ext-unix-sk']) {
      expect(c.checkpoint).toContain(opt);
    }
    expect(c.restart).toMatch(/^touch \{image\}\/ssi-restored && criu restore -D \{image\} -d /);
    expect(c.restart).toContain('--tcp-established');
  });
});

/** Alive and not a zombie (an orphan's zombie waits for whoever adopted it to reap it). */
function running(pid: number): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}

describe('runDetached', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('reports exit status and stderr, and runs outside this process tree', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ssi-cr-external-run-'));
    const r = await runDetached(
      'p=$$; while [ "$p" -gt 1 ]; do echo $p; p=$(cut -d" " -f4 /proc/$p/stat); done > "$D/chain"; echo broken >&2; exit 7',
      dir,
      { D: dir },
      20_000,
    );
    expect(r.code).toBe(7);
    expect(r.stderr).toBe('broken\n');
    // The command's ancestors (itself up to, not including, pid 1): this process is not one.
    const chain = readFileSync(join(dir, 'chain'), 'utf8').trim().split('\n').map(Number);
    expect(chain.length).toBeGreaterThan(0);
    expect(chain).not.toContain(process.pid);
  });

  it('a command that does not end in time is killed and the error says what was awaited', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ssi-cr-external-run-'));
    await expect(runDetached('sleep 30', dir, {}, 500)).rejects.toThrow(
      /timed out after 1 s waiting for the command "sleep 30" to end .*it was killed/,
    );
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    await new Promise((r) => setTimeout(r, 200));
    expect(running(pid), `the runner ${pid} was killed`).toBe(false);
  });
});
