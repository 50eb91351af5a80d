import { Redis, type RedisOptions } from 'ioredis';

/** Where Redis is: one server (redis://, rediss://) or a primary found through Sentinel. */
export type RedisTarget =
  | { kind: 'server'; url: string }
  | {
      kind: 'sentinel';
      sentinels: Array<{ host: string; port: number }>;
      /** The primary's name, as the sentinels monitor it. */
      name: string;
      db: number;
      username: string | undefined;
      password: string | undefined;
      tls: boolean;
    };

const DEFAULT_SENTINEL_PORT = 26379;
const SENTINEL_URL = /^(rediss?)\+sentinel:\/\/(?:([^@/]*)@)?([^/]+)\/([^/?#]+)(?:\/(\d+))?\/?$/;
const ADDRESS = /^(?:\[([0-9a-fA-F:.]+)\]|([^:,[\]]+))(?::(\d{1,5}))?$/;

/**
 * `--redis` as a target: `redis://` and `rediss://` as they are, or
 * `redis+sentinel://[USER:PASSWORD@]HOST:PORT[,HOST:PORT...]/MASTER_NAME[/DB]`
 * (`rediss+sentinel://` for TLS to the sentinels and the servers). The credentials are
 * those of the servers, as in redis://. Throws an Error saying what is wrong.
 */
export function parseRedisTarget(raw: string): RedisTarget {
  if (/^rediss?:\/\//.test(raw)) {
    if (!URL.canParse(raw)) throw new Error(`${raw} is not a URL; use redis://HOST:PORT/DB`);
    return { kind: 'server', url: raw };
  }
  const match = SENTINEL_URL.exec(raw);
  if (!match) {
    throw new Error(
      `"${redacted(raw)}" is neither redis://HOST:PORT/DB nor redis+sentinel://HOST:PORT[,HOST:PORT...]/MASTER_NAME[/DB]`,
    );
  }
  const [, scheme, userinfo, hosts, name, db] = match;
  const sentinels = hosts!.split(',').map((address) => {
    const parts = ADDRESS.exec(address);
    const port = Number(parts?.[3] ?? DEFAULT_SENTINEL_PORT);
    if (!parts || port < 1 || port > 65535) throw new Error(`"${address}" is not a sentinel HOST:PORT`);
    return { host: parts[1] ?? parts[2]!, port };
  });
  const colon = userinfo?.indexOf(':') ?? -1;
  const username =
    userinfo && colon !== 0 ? decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon)) : undefined;
  const password = userinfo && colon >= 0 ? decodeURIComponent(userinfo.slice(colon + 1)) : undefined;
  return {
    kind: 'sentinel',
    sentinels,
    name: decodeURIComponent(name!),
    db: Number(db ?? 0),
    username,
    password,
    tls: scheme === 'rediss',
  };
}

/** A client of the target with these options (lazyConnect, retries ...), as ioredis takes them. */
export function connectRedis(target: RedisTarget | string, options: RedisOptions): Redis {
  const resolved = typeof target === 'string' ? parseRedisTarget(target) : target;
  if (resolved.kind === 'server') return new Redis(resolved.url, options);
  return new Redis({
    ...options,
    sentinels: resolved.sentinels,
    name: resolved.name,
    db: resolved.db,
    ...(resolved.username ? { username: resolved.username } : {}),
    ...(resolved.password ? { password: resolved.password } : {}),
    ...(resolved.tls ? { tls: {}, enableTLSForSentinelMode: true, sentinelTLS: {} } : {}),
    // Sentinel tells of a new primary at once (+switch-master), rather than at the next error.
    failoverDetector: true,
    // Keep asking the sentinels while none answers: the audit log fails closed meanwhile.
    sentinelRetryStrategy: (attempt: number) => Math.min(100 * attempt, 2000),
  });
}

/** The URL without its password, for messages. */
export function redacted(raw: string): string {
  return raw.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}
