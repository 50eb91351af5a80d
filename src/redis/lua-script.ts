import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { FramedCommand } from './framed-command.js';

/** A Lua script with its SHA1, run by EVALSHA with an EVAL fallback. */
export class LuaScript {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source, 'utf8').digest('hex');
  }

  /** NOSCRIPT means the script did not run at all, so falling back to EVAL is safe. */
  async run(
    redis: Redis,
    keys: readonly string[],
    args: readonly (string | number | Buffer)[],
  ): Promise<unknown> {
    try {
      return await redis.sendCommand(command('evalsha', this.sha, keys, args));
    } catch (err) {
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return redis.sendCommand(command('eval', this.source, keys, args));
    }
  }
}

function command(
  name: 'evalsha' | 'eval',
  script: string,
  keys: readonly string[],
  args: readonly (string | number | Buffer)[],
): FramedCommand {
  return new FramedCommand(name, [script, keys.length, ...keys, ...args], { replyEncoding: 'utf8' });
}
