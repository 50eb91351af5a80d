import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ControlPlaneUnavailableError, resolveBinaries, testAssetsCache } from './binaries.js';

describe('resolveBinaries', () => {
  let dir = '';
  const fake = (name: string): string => join(dir, name);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'arbiter-binaries-'));
    for (const name of ['kube-apiserver', 'etcd', 'kubectl', 'my-apiserver']) {
      await writeFile(fake(name), '#!/bin/sh\n');
      await chmod(fake(name), 0o755);
    }
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const empty = { PATH: '', HOME: '/nonexistent' };

  it('takes a KUBEBUILDER_ASSETS-style directory', () => {
    expect(resolveBinaries({ ...empty, ARBITER_TEST_ASSETS: dir })).toEqual({
      kubeApiserver: fake('kube-apiserver'),
      etcd: fake('etcd'),
      kubectl: fake('kubectl'),
    });
  });

  it('prefers a single binary named explicitly, and refuses one that is not executable', () => {
    const env = { ...empty, ARBITER_TEST_ASSETS: dir, ARBITER_KUBE_APISERVER: fake('my-apiserver') };
    expect(resolveBinaries(env).kubeApiserver).toBe(fake('my-apiserver'));
    expect(() => resolveBinaries({ ...env, ARBITER_ETCD: fake('missing') })).toThrow(
      /ARBITER_ETCD=.*missing/,
    );
    expect(resolveBinaries({ ...env, ARBITER_KUBECTL: fake('etcd') }).kubectl).toBe(fake('etcd'));
    expect(() => resolveBinaries({ ...env, ARBITER_KUBECTL: fake('missing') })).toThrow(
      /ARBITER_KUBECTL=.*missing/,
    );
  });

  it('finds the binaries test/env/setup caches, then PATH (but never kubectl on PATH)', async () => {
    await mkdir(join(dir, 'cache/bin'), { recursive: true });
    await symlink(fake('kube-apiserver'), join(dir, 'cache/bin/kube-apiserver'));
    const env = { ...empty, ARBITER_TEST_CACHE: join(dir, 'cache'), PATH: `/nowhere:${dir}` };
    // PATH may hold Google Cloud SDK's kubectl dispatcher, which is no kubectl.
    expect(() => resolveBinaries(env)).toThrow(/kubectl \(looked in: .*cache\/bin\/kubectl; never PATH\)/);
    await symlink(fake('kubectl'), join(dir, 'cache/bin/kubectl'));
    expect(resolveBinaries(env)).toEqual({
      kubeApiserver: join(dir, 'cache/bin/kube-apiserver'),
      etcd: fake('etcd'),
      kubectl: join(dir, 'cache/bin/kubectl'),
    });
    expect(testAssetsCache({ HOME: '/home/u' })).toBe('/home/u/.cache/arbiter-test-assets');
    expect(testAssetsCache({ XDG_CACHE_HOME: '/c' })).toBe('/c/arbiter-test-assets');
  });

  it('explains how to get them when they are missing', () => {
    const run = (): unknown => resolveBinaries({ ...empty, ARBITER_TEST_CACHE: '/nowhere' });
    expect(run).toThrow(ControlPlaneUnavailableError);
    expect(run).toThrow(/bash test\/env\/setup/);
    expect(run).toThrow(/etcd \(looked in/);
  });
});
