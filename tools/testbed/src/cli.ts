#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { isSsiError } from '@ssi/core';
import { killStrayTestbeds } from './strays';
import { attachTestbed, startTestbed, testbedStatus } from './testbed';

const USAGE = `usage:
  ssi-testbed up N [--dir D] [--first-address K] [--port P] [--reject-key-for I,J] [--json]
      start N test hosts (sshd on 127.0.0.K, K+1, …; default: the first free from 127.0.0.2),
      write a boot schema, print the directory, and leave the sshds running
  ssi-testbed status --dir D [--check] [--json]
      show which test hosts run (--check: also log in to each); exit 1 if one is down
  ssi-testbed down --dir D
      stop the testbed in D (every sshd by its PidFile, and what runs under it) and remove D
  ssi-testbed clean [--all]
      stop testbeds left behind by crashed runs (--all: every testbed on this machine)`;

class UsageError extends Error {}

function intArg(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw new UsageError(`${name} must be an integer, got "${v}"`);
  return n;
}

function needDir(dir: string | undefined, positional: string[]): string {
  const d = dir ?? positional[0];
  if (!d) throw new UsageError('--dir D is required (the directory printed by `ssi-testbed up`)');
  return d;
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      dir: { type: 'string' },
      'first-address': { type: 'string' },
      port: { type: 'string' },
      'reject-key-for': { type: 'string' },
      json: { type: 'boolean' },
      check: { type: 'boolean' },
      all: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.help || command === 'help' || command === undefined) {
    console.log(USAGE);
    return command === undefined && !values.help ? 2 : 0;
  }
  switch (command) {
    case 'up': {
      const n = intArg('N', rest[0]);
      if (n === undefined) throw new UsageError('up needs the number of hosts: ssi-testbed up N');
      const t0 = performance.now();
      const tb = await startTestbed({
        hosts: n,
        dir: values.dir,
        firstAddress: intArg('--first-address', values['first-address']),
        port: intArg('--port', values.port),
        rejectKeyFor: values['reject-key-for']
          ?.split(',')
          .filter(Boolean)
          .map((x) => intArg('--reject-key-for', x)!),
        persistent: true,
      });
      const seconds = (performance.now() - t0) / 1000;
      const schema = tb.writeBootSchema('hostfile');
      if (values.json) {
        console.log(
          JSON.stringify(
            {
              dir: tb.dir,
              hosts: tb.hosts,
              port: tb.port,
              schema,
              sshConfigPath: tb.sshConfigPath,
              keyFile: tb.keyFile,
              sshCommand: tb.sshCommand,
              seconds,
            },
            null,
            2,
          ),
        );
      } else {
        const first = tb.hosts[0]!.address;
        console.log(`testbed up: ${tb.hosts.length} hosts in ${seconds.toFixed(2)} s`);
        console.log(`dir     ${tb.dir}`);
        console.log(`schema  ${schema}`);
        for (const [i, h] of tb.hosts.entries()) {
          console.log(`${i === 0 ? 'hosts  ' : '       '} ${h.name} ${h.address}`);
        }
        console.log(`ssh     ${tb.sshCommand.join(' ')} ${first} hostname`);
        console.log(`stop    ssi-testbed down --dir ${tb.dir}`);
      }
      return 0;
    }
    case 'status': {
      const dir = needDir(values.dir, rest);
      const st = testbedStatus(dir);
      const logins = new Map<string, string>();
      if (values.check) {
        const tb = attachTestbed(dir);
        await Promise.all(
          st.hosts.map(async (h) => {
            const r = await tb.ssh(h, 'true', { timeoutMs: 15_000 }).catch((e: Error) => ({
              code: -1,
              stderr: e.message,
            }));
            const ok = h.rejectsKey ? /Permission denied/.test(r.stderr) : r.code === 0;
            logins.set(
              h.name,
              ok
                ? h.rejectsKey
                  ? 'refuses key (as asked)'
                  : 'login ok'
                : `login FAILED: ${r.stderr.trim()}`,
            );
          }),
        );
      }
      const down = st.hosts.filter((h) => !h.running).length;
      const failed = [...logins.values()].filter((v) => v.startsWith('login FAILED')).length;
      if (values.json) {
        console.log(
          JSON.stringify(
            { ...st, hosts: st.hosts.map((h) => ({ ...h, login: logins.get(h.name) })) },
            null,
            2,
          ),
        );
      } else {
        console.log(
          `testbed ${st.dir} (port ${st.port}, ${st.owner ? `owned by pid ${st.owner.pid}` : 'started by ssi-testbed up'})`,
        );
        for (const h of st.hosts) {
          const run = h.running ? `running (sshd pid ${h.pid})` : 'NOT running';
          const login = logins.get(h.name);
          console.log(`  ${h.name} ${h.address}  ${run}${login ? `, ${login}` : ''}`);
        }
      }
      return down + failed === 0 ? 0 : 1;
    }
    case 'down': {
      const dir = needDir(values.dir, rest);
      let tb: ReturnType<typeof attachTestbed> | undefined;
      try {
        tb = attachTestbed(dir);
      } catch {
        // no testbed.json: still kill whatever sshds name this directory
      }
      if (tb) await tb.stop();
      else await killStrayTestbeds({ dir });
      console.log(`testbed ${dir} stopped and removed`);
      return 0;
    }
    case 'clean': {
      const r = await killStrayTestbeds({ all: values.all });
      if (r.dirs.length === 0) console.log('no stray testbeds');
      for (const d of r.dirs) console.log(`stopped and removed ${d}`);
      if (r.survivors.length > 0) {
        console.error(`processes that survived SIGKILL: ${r.survivors.join(', ')}`);
        return 1;
      }
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    if (e instanceof UsageError || (e as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      console.error(`ssi-testbed: ${(e as Error).message}\n\n${USAGE}`);
      process.exit(2);
    }
    console.error(`ssi-testbed: ${isSsiError(e) ? e.message : String((e as Error)?.stack ?? e)}`);
    process.exit(1);
  },
);
