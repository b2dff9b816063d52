import { describe, expect, it } from 'vitest';
import { countsForNodes, expandCounts } from '../src/counts';
import { expandHostlist, MAX_HOSTS } from '../src/hostlist';

describe('expandHostlist', () => {
  it('expands ranges and lists in brackets, in the order written', () => {
    expect(expandHostlist('node[1-4,7],gpu01')).toEqual([
      'node1',
      'node2',
      'node3',
      'node4',
      'node7',
      'gpu01',
    ]);
    expect(expandHostlist('vm')).toEqual(['vm']);
    expect(expandHostlist('a,b,c')).toEqual(['a', 'b', 'c']);
    expect(expandHostlist('n[3]')).toEqual(['n3']);
  });

  it('keeps the width of zero-padded ranges', () => {
    const hosts = expandHostlist('n[001-010]');
    expect(hosts).toHaveLength(10);
    expect(hosts[0]).toBe('n001');
    expect(hosts[9]).toBe('n010');
    expect(expandHostlist('n[08-11]')).toEqual(['n08', 'n09', 'n10', 'n11']);
    expect(expandHostlist('n[098-101]')).toEqual(['n098', 'n099', 'n100', 'n101']);
    expect(expandHostlist('n[9-10]')).toEqual(['n9', 'n10']);
  });

  it('multiplies several bracket groups, the leftmost varying slowest, with text around them', () => {
    expect(expandHostlist('rack[1-2]-node[01-02].ib')).toEqual([
      'rack1-node01.ib',
      'rack1-node02.ib',
      'rack2-node01.ib',
      'rack2-node02.ib',
    ]);
    expect(expandHostlist('[1-2]x,c[5,3]')).toEqual(['1x', '2x', 'c5', 'c3']);
  });

  it.each([
    ['', /SLURM_JOB_NODELIST is empty/],
    ['node[1-4', /position 5: "\[" is never closed/],
    ['node[1-4,', /position 5: "\[" is never closed/],
    ['node1-4]', /position 8: "\]" without a matching "\["/],
    ['node[[1]]', /position 6: .*a number is missing|position 6: "\[" in a range/],
    ['node[1[2]]', /position 7: brackets cannot nest/],
    ['node[]', /position 6: a number is missing before "\]"/],
    ['node[a-b]', /position 6: "a" in a range: expected a number/],
    ['node[5-3]', /position 6: the range 5-3 runs backwards/],
    ['node[1-]', /position 8: a number is missing before "\]"/],
    ['a,,b', /position 3: empty host name/],
    ['a,', /position 3: empty host name/],
    [',a', /position 1: empty host name/],
    ['a b', /position 2: white space/],
    ['node$1', /position 5: "\$" cannot be part of a host name/],
    ['n[1-2 ]', /position 6: " " in a range/],
    ['n[0-99999999]', /more than 65536/],
  ])('refuses %j with a message naming the position', (text, message) => {
    expect(() => expandHostlist(text)).toThrow(message);
  });

  it('shows the expression and a caret under the position, and names the variable', () => {
    try {
      expandHostlist('gpu[1-2', 'SLURM_NODELIST');
      expect.unreachable();
    } catch (err) {
      const msg = (err as Error).message;
      expect(msg).toContain('malformed hostlist in SLURM_NODELIST at position 4');
      expect(msg).toContain('\n  gpu[1-2\n     ^\n');
      expect((err as { failure?: string }).failure).toBe('BAD_ARGS');
    }
  });

  it('limits the total expansion', () => {
    expect(() => expandHostlist(`a[1-${MAX_HOSTS}],b`)).toThrow(/more than 65536 hosts/);
    expect(expandHostlist(`a[1-${MAX_HOSTS}]`)).toHaveLength(MAX_HOSTS);
  });
});

describe('expandCounts', () => {
  it('expands repeats', () => {
    expect(expandCounts('2(x3),1', 'SLURM_TASKS_PER_NODE')).toEqual([2, 2, 2, 1]);
    expect(expandCounts('1', 'X')).toEqual([1]);
    expect(expandCounts('4,8(x2),16', 'X')).toEqual([4, 8, 8, 16]);
    expect(expandCounts('72(x1)', 'X')).toEqual([72]);
  });

  it.each([
    ['', /X is empty/],
    ['2(x3', /position 5: "\(x3" is not closed/],
    ['2(3)', /position 3: a repeat is written "\(xN\)"/],
    ['2(x)', /position 4: "\)" where a repeat count was expected/],
    ['2,,1', /position 3: "," where a count was expected/],
    ['2,', /position 3: a count is missing at the end/],
    ['0,1', /position 1: 0 is not a count/],
    ['2 1', /position 2: " " where "," or the end was expected/],
    ['two', /position 1: "t" where a count was expected/],
  ])('refuses %j naming the position', (text, message) => {
    expect(() => expandCounts(text, 'X')).toThrow(message);
  });

  it('must match the number of nodes', () => {
    expect(countsForNodes('2(x2)', 'SLURM_TASKS_PER_NODE', ['a', 'b'])).toEqual([2, 2]);
    expect(() => countsForNodes('2(x3)', 'SLURM_TASKS_PER_NODE', ['a', 'b'])).toThrow(
      /SLURM_TASKS_PER_NODE=2\(x3\) gives 3 count\(s\) but the job has 2 node\(s\) \(a,b\)/,
    );
  });
});
