import { runCli } from '@ssi/cli/testing';
import { describe, expect, it } from 'vitest';

// "Parameters shown by laminfo": run from this package, whose node_modules make the installed
// plugins visible, as for a user.
const laminfo = (args: string[]) =>
  runCli('laminfo', args, process.env, { cwd: `${import.meta.dirname}/..`, timeoutMs: 30_000 });

describe('laminfo and the external cr component', () => {
  it('lists both halves, crlam external and crmpi external', async () => {
    const r = await laminfo([]);
    expect(r.code, r.stderr).toBe(0);
    for (const type of ['crlam', 'crmpi']) {
      expect(r.stdout).toMatch(
        new RegExp(
          `SSI ${type}: external \\(SSI v1\\.0\\.0, API v1\\.0\\.0, Module v1\\.0\\.0\\) \\[node_modules: .*cr-external\\]`,
        ),
      );
    }
  });

  it('--param crmpi external shows the back end, the commands, the time-out and criu options', async () => {
    const r = await laminfo([
      '--ssi',
      'crmpi_external_backend',
      'hooks',
      '--param',
      'crmpi',
      'external',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'parameter "crmpi_external_backend" (string, default: "generic", value: "hooks", source: command line, --ssi)',
    );
    for (const line of [
      'parameter "crmpi_external_checkpoint_cmd" (string, default: "", value: "", source: default)',
      'parameter "crmpi_external_restart_cmd" (string, default: "", value: "", source: default)',
      'parameter "crmpi_external_timeout" (int, default: "600", value: "600", source: default)',
      'parameter "crmpi_external_restore_timeout" (int, default: "60", value: "60", source: default)',
      'parameter "crmpi_external_criu" (string, default: "criu", value: "criu", source: default)',
      'parameter "crmpi_external_criu_args" (string, default: "", value: "", source: default)',
    ]) {
      expect(r.stdout).toContain(line);
    }
    expect(r.stdout).toMatch(/placeholders \{pid\} \{rank\} \{node\} \{host\} \{image\}/);
  });

  it('--param crlam external shows dir, keep and interval', async () => {
    const r = await laminfo(['--param', 'crlam', 'external']);
    expect(r.code, r.stderr).toBe(0);
    for (const line of [
      'parameter "crlam_external_dir" (string, default: "", value: "", source: default)',
      'parameter "crlam_external_keep" (int, default: "2", value: "2", source: default)',
      'parameter "crlam_external_interval" (int, default: "0", value: "0", source: default)',
    ]) {
      expect(r.stdout).toContain(line);
    }
  });
});
