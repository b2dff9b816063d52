import type { AgentResult, BootNode } from '@ssi/lam';
import { describe, expect, it } from 'vitest';
import rsh, { agentArgv, classifyOutcome, parseAgent, shellQuote } from '../src/index';

const node = (extra: Partial<BootNode> = {}): BootNode => ({
  id: 2,
  name: '127.0.0.4',
  address: '127.0.0.4',
  cpus: 1,
  schedulable: true,
  boot: true,
  origin: false,
  me: false,
  keyval: {},
  ...extra,
});
const result = (r: Partial<AgentResult>): AgentResult => ({
  code: 0,
  signal: null,
  stdout: '',
  stderr: '',
  timedOut: false,
  ...r,
});

describe('the rsh module', () => {
  it('declares its parameters with defaults and help (what laminfo --param boot rsh shows)', () => {
    expect(rsh).toMatchObject({ type: 'boot', name: 'rsh', typeApi: '1.1.0' });
    expect(rsh.params.agent).toMatchObject({ type: 'string', default: 'ssh' });
    expect(rsh.params.username).toMatchObject({ type: 'string', default: '' });
    expect(rsh.params.priority).toMatchObject({ type: 'int', default: 10 });
  });

  it('builds the remote command: agent, BatchMode for ssh, -l user, host, quoted command', () => {
    expect(
      agentArgv(parseAgent('ssh -F /t/cfg'), 'h1', 'alice', ['/opt/my ssi/bin/hboot']),
    ).toEqual([
      'ssh',
      '-F',
      '/t/cfg',
      '-o',
      'BatchMode=yes',
      '-l',
      'alice',
      'h1',
      "'/opt/my ssi/bin/hboot'",
    ]);
    expect(agentArgv(['rsh'], 'h1', undefined, ['hboot'])).toEqual(['rsh', 'h1', 'hboot']);
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
  });

  it('turns remote shell failures into messages that name the host and the fix', () => {
    const c = (r: Partial<AgentResult>, n = node()) =>
      classifyOutcome(result(r), n, 'lamd', 'ssh', 5000)?.message;
    expect(c({ code: 127, stderr: 'bash: line 1: hboot: command not found' })).toBe(
      'lamd not found on 127.0.0.4 (not on its PATH): install @ssi/cli there or set prefix= in the boot schema',
    );
    expect(c({ code: 127 }, node({ prefix: '/opt/x' }))).toMatch(/looked for \/opt\/x\/bin\/hboot/);
    expect(c({ code: 255, stderr: 'root@127.0.0.4: Permission denied (publickey).' })).toMatch(
      /^ssh to 127.0.0.4 was refused .*Permission denied.*authorized_keys/,
    );
    expect(
      c({ code: 255, stderr: 'ssh: connect to host 127.0.0.4 port 22: Connection refused' }),
    ).toMatch(/^cannot reach 127.0.0.4 with ssh: .*Connection refused/);
    expect(c({ timedOut: true, code: null, signal: 'SIGKILL' })).toMatch(
      /did not finish within 5 s \(boot_base_timeout\)/,
    );
    expect(c({ code: 1, stderr: 'hboot: a lamd (pid 9) already runs on 127.0.0.4' })).toMatch(
      /already runs/,
    );
    expect(c({ code: 0, stdout: 'Welcome to the cluster!\n' })).toMatch(
      /unexpected answer from 127.0.0.4/,
    );
    expect(c({ spawnError: 'spawn ssh ENOENT', code: -2 })).toMatch(
      /cannot run the remote shell "ssh"/,
    );
    expect(c({ code: 0, stdout: 'lamd 123 4567\n' })).toBeUndefined();
  });
});
