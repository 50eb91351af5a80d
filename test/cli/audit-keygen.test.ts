import { readFile, stat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { formatVerifierKey, parseSigningKey, parseVerifierKey } from '../../src/audit/note/note-keys.js';
import { openNote, signNote } from '../../src/audit/note/signed-note.js';
import { runArbiter, useFixtureDir } from './support/cli-run.js';

describe('arbiter audit keygen', () => {
  const fixtures = useFixtureDir('arbiter-keygen-');

  it('writes a private key only its owner can read and prints the verifier key that checks its signatures', async () => {
    const out = fixtures.path('signing.key');
    const result = await runArbiter([
      'audit',
      'keygen',
      '--origin',
      'arbiter.example.com/prod-audit',
      '--out',
      out,
    ]);
    expect(result.code, result.stderr).toBe(0);
    const vkey = result.stdout.trim();
    expect(vkey).toMatch(/^arbiter\.example\.com\/prod-audit\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    expect((await stat(out)).mode & 0o777).toBe(0o600);
    const key = parseSigningKey(await readFile(out, 'utf8'));
    expect(formatVerifierKey(key)).toBe(vkey);
    expect(openNote(signNote('checkpoint\n', [key]), [parseVerifierKey(vkey)]).text).toBe('checkpoint\n');
  });

  it('never overwrites an existing key file', async () => {
    const out = fixtures.path('kept.key');
    expect((await runArbiter(['audit', 'keygen', '--origin', 'a.example/log', '--out', out])).code).toBe(0);
    const before = await readFile(out, 'utf8');
    const again = await runArbiter(['audit', 'keygen', '--origin', 'a.example/log', '--out', out]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('the file exists (never overwritten)');
    expect(await readFile(out, 'utf8')).toBe(before);
  });

  it('refuses an origin that cannot be a key name, and explains its usage without arguments', async () => {
    const bad = await runArbiter([
      'audit',
      'keygen',
      '--origin',
      'has space',
      '--out',
      fixtures.path('bad.key'),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('not a valid key name');
    await expect(stat(fixtures.path('bad.key'))).rejects.toMatchObject({ code: 'ENOENT' });
    const usage = await runArbiter(['audit', 'keygen']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toBe(
      'arbiter audit keygen: --origin and --out are required (see arbiter audit keygen --help)\n',
    );
  });
});
