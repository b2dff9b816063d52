import { describe, expect, it } from 'vitest';
import {
  type BootNode,
  check127Rule,
  checkDistinctAddresses,
  markLocalNode,
  parseBootSchema,
  resolveAddresses,
} from '../src/index';

const parse = (text: string) => parseBootSchema(text, 'hosts');

describe('boot schema (App. B.1.7)', () => {
  it('reads hosts, cpu=, user=, prefix=, schedule= and module keys, skipping comments', () => {
    const { nodes, warnings } = parse(`# cluster
inky.example.com cpu=2
pinky.example.com cpu=4 user=jsmith   # trailing comment
  blinky prefix=/opt/ssi/ schedule=no globus_contact=x:1

hostname=clyde cpu=1
`);
    expect(warnings).toEqual([]);
    expect(nodes.map((n) => [n.id, n.name, n.cpus, n.schedulable])).toEqual([
      [0, 'inky.example.com', 2, true],
      [1, 'pinky.example.com', 4, true],
      [2, 'blinky', 1, false],
      [3, 'clyde', 1, true],
    ]);
    expect(nodes[1]!.user).toBe('jsmith');
    expect(nodes[2]!.prefix).toBe('/opt/ssi');
    expect(nodes[2]!.keyval).toMatchObject({
      hostname: 'blinky',
      globus_contact: 'x:1',
      schedule: 'no',
    });
    expect(nodes[3]!.where).toEqual({ file: 'hosts', line: 6 });
    expect(nodes.every((n) => n.boot && !n.origin)).toBe(true);
  });

  it('folds a host listed twice into one node, adding CPUs, with a warning naming both lines', () => {
    const { nodes, warnings } = parse('a cpu=2\nb\na\n');
    expect(nodes.map((n) => [n.name, n.cpus])).toEqual([
      ['a', 3],
      ['b', 1],
    ]);
    expect(warnings).toEqual([
      'hosts:3: a is already listed on line 1; CPU counts added (now cpu=3)',
    ]);
  });

  it('reports every syntax error with file and line', () => {
    let message = '';
    try {
      parse(
        'good cpu=1\nbad cpu=two\nx user\n=y\nz schedule=maybe prefix=rel/path\nq cpu=\nw hostname=v\n',
      );
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('hosts:2: cpu=two is not a CPU count');
    expect(message).toContain('hosts:3: "user" is not key=value');
    expect(message).toContain('hosts:4: a line must start with a host name');
    expect(message).toContain('hosts:5: schedule=maybe; expected yes or no');
    expect(message).toContain('hosts:5: prefix=rel/path must be an absolute path');
    expect(message).toContain('hosts:6: cpu= has no value');
    expect(message).toContain('hosts:7: hostname= may only start a line');
  });

  it('an unknown key is an error with file:line and the closest known key; module keys have a prefix', () => {
    expect(() => parse('a cpu=1\nb cpus=2\n')).toThrow(
      'hosts:2: unknown key "cpus"; did you mean "cpu"? (known: cpu, user, prefix, schedule, hostname; a boot module\'s own keys are <module>_<key>)',
    );
    expect(() => parse('a colour=red\n')).toThrow(/hosts:1: unknown key "colour" \(known: /);
    expect(parse('a rsh_agent=ssh\n').nodes[0]!.keyval).toMatchObject({ rsh_agent: 'ssh' });
  });

  it('refuses conflicting duplicates, bad host names and an empty schema', () => {
    expect(() => parse('a user=x\na user=y\n')).toThrow(
      /hosts:2: a is listed again with user=y, but line 1 says user=x/,
    );
    expect(() => parse('not_a/host\n')).toThrow(/hosts:1: "not_a\/host" is not a host name/);
    expect(() => parse('# nothing\n\n')).toThrow(/hosts: no hosts/);
  });
});

function nodes(...specs: [string, string][]): BootNode[] {
  return parse(specs.map(([name]) => name).join('\n')).nodes.map((n, i) => ({
    ...n,
    address: specs[i]![1],
  }));
}

describe('node verification (App. B.2.6)', () => {
  it('finds the local node by LAM_MPI_SESSION_HOST name, else says how to fix it', () => {
    const list = nodes(['127.0.0.2', '127.0.0.2'], ['127.0.0.3', '127.0.0.3']);
    expect(markLocalNode(list, '127.0.0.3', 'hosts').id).toBe(1);
    expect(list[1]!.me).toBe(true);
    expect(() => markLocalNode(nodes(['127.0.0.2', '127.0.0.2']), 'elsewhere', 'hosts')).toThrow(
      /this host \("elsewhere"\) is not in the boot schema hosts.*LAM_MPI_SESSION_HOST/s,
    );
  });

  it('finds the local node by a local interface address when the name does not match', () => {
    const list = nodes(['localhost', '127.0.0.1']);
    expect(markLocalNode(list, 'some-other-name', 'hosts').name).toBe('localhost');
  });

  it('applies the 127.0.0.1 rule of Ch. 4.1.2 (other loopback addresses are fine)', () => {
    expect(() => check127Rule(nodes(['localhost', '127.0.0.1']))).not.toThrow();
    expect(() =>
      check127Rule(nodes(['127.0.0.2', '127.0.0.2'], ['127.0.0.3', '127.0.0.3'])),
    ).not.toThrow();
    expect(() => check127Rule(nodes(['localhost', '127.0.0.1'], ['b', '127.0.0.3']))).toThrow(
      /hosts:1: localhost is 127.0.0.1, which cannot be used together with other hosts/,
    );
  });

  it('refuses two names for one address', () => {
    expect(() => checkDistinctAddresses(nodes(['a', '127.0.0.5'], ['b', '127.0.0.5']))).toThrow(
      /hosts:2: b is 127.0.0.5, which is already a \(n0\)/,
    );
  });

  it('resolves names and reports the ones that do not resolve, with their line', async () => {
    const list = parse('localhost\nno-such-host.invalid\n').nodes;
    await expect(resolveAddresses(list, 5000)).rejects.toThrow(
      /hosts:2: cannot resolve host "no-such-host.invalid"/,
    );
    expect(list[0]!.address).toBe('127.0.0.1');
  });
});
