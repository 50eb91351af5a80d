import { describe, expect, it } from 'vitest';
import { LuaScript } from '../../src/redis/lua-script.js';
import { useRedisSuite } from './support/redis-suite.js';

const ECHO = new LuaScript(`
local out = {}
for _, key in ipairs(KEYS) do out[#out + 1] = key end
for _, arg in ipairs(ARGV) do out[#out + 1] = arg end
return out
`);

describe('LuaScript against a real redis-server', () => {
  const suite = useRedisSuite();

  it('passes keys and arguments byte for byte: strings of any characters, numbers, buffers', async () => {
    const keys = ['k:{a}', 'ключ:{a}', ''];
    const args = ['é€𝄞 \r\n$*', 42, -1.5, Buffer.from('bytes\r\n'), '', Buffer.alloc(0), 'x'.repeat(100_000)];
    const reply = await ECHO.run(suite.admin(), keys, args);
    expect(reply).toEqual([...keys, 'é€𝄞 \r\n$*', '42', '-1.5', 'bytes\r\n', '', '', 'x'.repeat(100_000)]);
  });

  it('falls back to EVAL when Redis does not have the script (after SCRIPT FLUSH or a restart)', async () => {
    await suite.admin().script('FLUSH');
    expect(await suite.admin().script('EXISTS', ECHO.sha)).toEqual([0]);
    expect(await ECHO.run(suite.admin(), ['k'], ['v'])).toEqual(['k', 'v']);
    expect(await suite.admin().script('EXISTS', ECHO.sha)).toEqual([1]);
  });

  it("rejects with the script's error", async () => {
    const failing = new LuaScript(`return redis.error_reply('no such thing')`);
    await expect(failing.run(suite.admin(), [], [])).rejects.toThrow('no such thing');
  });
});
