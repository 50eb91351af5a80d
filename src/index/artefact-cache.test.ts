import { describe, expect, it, vi } from 'vitest';
import { ArtefactCache } from './artefact-cache.js';

function firstBuild(release: (value: string) => void) {
  const cache = new ArtefactCache();
  cache.get('Capability/kept', { v: 1 }, () => 'kept-1', release);
  cache.get('Capability/changed', { v: 1 }, () => 'changed-1', release);
  cache.get('Capability/removed', { v: 1 }, () => 'removed-1', release);
  return cache;
}

function secondBuild(previous: ArtefactCache, release: (value: string) => void) {
  const cache = new ArtefactCache(previous);
  cache.get('Capability/kept', { v: 1 }, () => 'kept-2', release);
  cache.get('Capability/changed', { v: 2 }, () => 'changed-2', release);
  cache.get('Capability/added', { v: 1 }, () => 'added-2', release);
  return cache;
}

describe('ArtefactCache', () => {
  it('reuses the artefact of an unchanged spec and compiles the rest', () => {
    const release = vi.fn();
    const next = new ArtefactCache(firstBuild(release));
    expect(next.get('Capability/kept', { v: 1 }, () => 'kept-2', release)).toBe('kept-1');
    expect(next.get('Capability/changed', { v: 2 }, () => 'changed-2', release)).toBe('changed-2');
    expect(next.compiled).toBe(1);
  });

  it('frees what the previous build compiled and the next one no longer uses', () => {
    const release = vi.fn();
    const next = secondBuild(firstBuild(release), release);
    expect(release).not.toHaveBeenCalled();
    next.releaseUnused();
    expect(release.mock.calls.map(([value]) => value as string).sort()).toEqual(['changed-1', 'removed-1']);
  });

  it('frees only what a trial build compiled itself', () => {
    const release = vi.fn();
    const trial = secondBuild(firstBuild(release), release);
    trial.releaseFresh();
    expect(release.mock.calls.map(([value]) => value as string).sort()).toEqual(['added-2', 'changed-2']);
  });

  it('frees nothing for artefacts that need no release', () => {
    const first = new ArtefactCache();
    first.get('Policy/p', { v: 1 }, () => 'p-1');
    const next = new ArtefactCache(first);
    next.get('Policy/p', { v: 2 }, () => 'p-2');
    expect(() => {
      next.releaseUnused();
      next.releaseFresh();
    }).not.toThrow();
  });
});
