import { runCli } from '@ssi/cli/testing';
import { describe, expect, it } from 'vitest';

// The issue: "`laminfo` lists the cr modules and their parameters". Run from this package, whose
// node_modules make the installed plugins (this one included) visible, as for a user.
const laminfo = (args: string[]) =>
  runCli('laminfo', args, process.env, { cwd: `${import.meta.dirname}/..`, timeoutMs: 30_000 });

describe('laminfo and the self cr component', () => {
  it('lists both halves, crlam self and crmpi self, with their versions and where they come from', async () => {
    const r = await laminfo([]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /SSI crlam: self \(SSI v1\.0\.0, API v1\.0\.0, Module v1\.0\.0\) \[node_modules: .*cr-self\]/,
    );
    expect(r.stdout).toMatch(
      /SSI crmpi: self \(SSI v1\.0\.0, API v1\.0\.0, Module v1\.0\.0\) \[node_modules: .*cr-self\]/,
    );
    expect(r.stdout).toMatch(/crlam framework: API v1\.0\.0 \(selector --ssi cr\)/);
  });

  it('--param crlam self shows crlam_self_dir, keep and interval with defaults, values and sources', async () => {
    const r = await laminfo(['--ssi', 'crlam_self_keep', '5', '--param', 'crlam', 'self']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'parameter "crlam_self_dir" (string, default: "", value: "", source: default)',
    );
    expect(r.stdout).toContain(
      'parameter "crlam_self_keep" (int, default: "2", value: "5", source: command line, --ssi)',
    );
    expect(r.stdout).toContain(
      'parameter "crlam_self_interval" (int, default: "0", value: "0", source: default)',
    );
    expect(r.stdout).toMatch(/Seconds between automatic checkpoints/);
  });

  it('--param crlam self shows the storage plan parameters (#17) with defaults and sources', async () => {
    const r = await laminfo(['--ssi', 'crlam_self_plan', 'parity', '--param', 'crlam', 'self']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'parameter "crlam_self_plan" (string, default: "local", value: "parity", source: command line, --ssi)',
    );
    expect(r.stdout).toContain(
      'parameter "crlam_self_second_dir" (string, default: "", value: "", source: default)',
    );
    expect(r.stdout).toContain(
      'parameter "crlam_self_parity_set" (int, default: "4", value: "4", source: default)',
    );
    expect(r.stdout).toContain(
      'parameter "crlam_self_copy_timeout" (int, default: "600", value: "600", source: default)',
    );
    expect(r.stdout).toMatch(/local \(files only in dir\), duplicate .* or parity/);
  });

  it('--param crlam|crmpi all shows the base parameters of each half (prepare timeout and attempts, safe points)', async () => {
    const lam = await laminfo(['--param', 'crlam', 'all']);
    expect(lam.code, lam.stderr).toBe(0);
    for (const name of ['crlam_base_prepare_timeout', 'crlam_base_prepare_attempts']) {
      expect(lam.stdout).toContain(`SSI crlam: parameter "${name}"`);
    }
    // Automatic recovery (mpirun's): off by default, spare nodes none.
    expect(lam.stdout).toContain(
      'SSI crlam: parameter "crlam_base_recover" (int, default: "0", value: "0", source: default)',
    );
    expect(lam.stdout).toContain(
      'SSI crlam: parameter "crlam_base_recover_nodes" (string, default: "", value: "", source: default)',
    );
    const r = await laminfo(['--param', 'crmpi', 'all']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('SSI crmpi: parameter "crmpi_base_safepoint_ms"');
    expect(r.stdout).toContain('parameter "crmpi_self_priority"');
    const all = await laminfo(['--param', 'all', 'all']);
    expect(all.stdout.match(/parameter "crlam_base_prepare_timeout"/g), 'listed once').toHaveLength(
      1,
    );
  });
});
