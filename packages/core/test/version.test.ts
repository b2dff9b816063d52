import { describe, expect, it } from 'vitest';
import { formatVersion, isApiCompatible, parseVersion, sameModuleVersion } from '../src/index';

describe('versions', () => {
  it('parses major.minor[.release] and ignores pre-release tags', () => {
    expect(parseVersion('1.2.3')).toEqual({ major: 1, minor: 2, release: 3 });
    expect(parseVersion('7.1')).toEqual({ major: 7, minor: 1, release: 0 });
    expect(formatVersion(parseVersion('2.0.1-beta.1'))).toBe('2.0.1');
  });

  it('rejects text that is not a version, saying what was expected', () => {
    expect(() => parseVersion('one', 'typeApi')).toThrow(
      /typeApi "one" is not a version; expected major.minor/,
    );
  });

  it('needs the same major and a minor not newer than the host', () => {
    const host = parseVersion('1.1.0');
    expect(isApiCompatible(parseVersion('1.0.5'), host)).toBe(true);
    expect(isApiCompatible(parseVersion('1.1.9'), host)).toBe(true);
    expect(isApiCompatible(parseVersion('1.2.0'), host)).toBe(false);
    expect(isApiCompatible(parseVersion('2.0.0'), host)).toBe(false);
    expect(isApiCompatible(parseVersion('0.9.0'), host)).toBe(false);
  });

  it('treats two module versions as equal when major and minor agree', () => {
    expect(sameModuleVersion(parseVersion('1.2.0'), parseVersion('1.2.7'))).toBe(true);
    expect(sameModuleVersion(parseVersion('1.2.0'), parseVersion('1.3.0'))).toBe(false);
  });
});
