import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { MIN_MASK_KEY_BYTES, ParameterMasker } from '../governance/parameter-masker.js';
import type { IndexSnapshot } from '../index/index.js';
import { ArbiterError } from '../model/index.js';
import { errorText } from '../model/error-text.js';

/**
 * The masker of sensitive parameters: keyed by --audit-mask-key's file (its bytes, without
 * surrounding whitespace), else by a key made for this process, with a warning the first
 * time it is used: masks then differ between replicas and restarts.
 */
export async function openParameterMasker(
  keyFile: string | undefined,
  index: { current(): IndexSnapshot },
  logger: Logger,
): Promise<ParameterMasker> {
  if (keyFile === undefined) {
    return ParameterMasker.withEphemeralKey(index, () =>
      logger.warn(
        'sensitive parameters are masked with a key made for this process: masks of equal values differ between replicas and restarts, and approved retries of such requests do not survive a restart; set --audit-mask-key FILE',
      ),
    );
  }
  let key: Buffer;
  try {
    key = Buffer.from((await readFile(keyFile, 'utf8')).trim(), 'utf8');
  } catch (err) {
    throw new ArbiterError('INVALID_REQUEST', `--audit-mask-key ${errorText(err)}`);
  }
  if (key.length < MIN_MASK_KEY_BYTES)
    throw new ArbiterError(
      'INVALID_REQUEST',
      `--audit-mask-key ${keyFile}: the key has ${key.length} bytes, at least ${MIN_MASK_KEY_BYTES} are needed (e.g. openssl rand -hex 32)`,
    );
  return new ParameterMasker(key, index);
}
