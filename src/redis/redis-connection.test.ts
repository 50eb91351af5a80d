import { describe, expect, it } from 'vitest';
import { parseRedisTarget, redacted } from './redis-connection.js';

describe('--redis targets', () => {
  it('keeps redis:// and rediss:// URLs as they are', () => {
    expect(parseRedisTarget('redis://127.0.0.1:6379/0')).toEqual({
      kind: 'server',
      url: 'redis://127.0.0.1:6379/0',
    });
    expect(parseRedisTarget('rediss://:pw@redis:6380')).toEqual({
      kind: 'server',
      url: 'rediss://:pw@redis:6380',
    });
  });

  it('reads the sentinels, the primary name, the database and the credentials of redis+sentinel://', () => {
    expect(parseRedisTarget('redis+sentinel://s1:26379,s2:26380,[::1]/mymaster/2')).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26380 },
        { host: '::1', port: 26379 },
      ],
      name: 'mymaster',
      db: 2,
      username: undefined,
      password: undefined,
      tls: false,
    });
    expect(parseRedisTarget('rediss+sentinel://arbiter:p%40ss@s1:5000/audit')).toMatchObject({
      username: 'arbiter',
      password: 'p@ss',
      db: 0,
      tls: true,
    });
    expect(parseRedisTarget('redis+sentinel://:secret@s1/m')).toMatchObject({
      username: undefined,
      password: 'secret',
    });
  });

  it.each([
    ['http://redis:6379', 'neither redis://HOST:PORT/DB nor redis+sentinel://'],
    ['redis+sentinel://s1:26379', 'neither'],
    ['redis+sentinel://s1:26379/m/x', 'neither'],
    ['redis+sentinel://s1:99999/m', '"s1:99999" is not a sentinel HOST:PORT'],
    ['redis+sentinel://s1:1,,s2:2/m', '"" is not a sentinel HOST:PORT'],
    ['redis://h:x/0', 'is not a URL'],
  ])('refuses %s', (raw, message) => {
    expect(() => parseRedisTarget(raw)).toThrow(message);
  });

  it('never repeats a password in its messages', () => {
    expect(() => parseRedisTarget('redis+sentinel://u:hunter2@s1')).toThrow('redis+sentinel://u:***@s1');
    expect(redacted('rediss://:pw@h:1/0')).toBe('rediss://:***@h:1/0');
  });
});
