import { describe, expect, it } from 'vitest';
import { appendLeaves, EMPTY_FRONTIER, type TreeFrontier } from '../merkle/tree-frontier.js';
import { HASH_BYTES, leafHash } from '../merkle/tree-hash.js';
import { RedisAuditKeys, TREE_CHUNK_RECORDS } from './redis-keys.js';
import { decodeFrontier, encodeFrontier, growTree } from './redis-tree.js';

const leaves = (...names: string[]) => names.map((name) => leafHash(name));

describe('decodeFrontier', () => {
  const frontier = appendLeaves(EMPTY_FRONTIER, leaves('a', 'b', 'c')).frontier;
  const encoded = encodeFrontier(frontier);

  it('reads back the encoding the head keeps, and nothing else that decodes to as many bytes', () => {
    expect(decodeFrontier(3, encoded)).toEqual(frontier);
    expect(decodeFrontier(3, `${encoded.slice(0, 20)}\n${encoded.slice(20)}`)).toBeUndefined();
    expect(decodeFrontier(3, ` ${encoded}`)).toBeUndefined();
  });
});

describe('growTree', () => {
  const keys = new RedisAuditKeys('unit:{audit}');
  // A perfect tree of half a chunk's leaves stores all but the chunk's last record, and
  // its frontier is one hash: the next leaf's record is the chunk's last.
  const halfChunk: TreeFrontier = { size: TREE_CHUNK_RECORDS / 2, hashes: leaves('root') };

  it('names one chunk for records that end at its last record', () => {
    const growth = growTree(keys, halfChunk, leaves('x'));
    expect(growth.records).toHaveLength(HASH_BYTES);
    expect(growth.firstPosition).toBe(TREE_CHUNK_RECORDS - 1);
    expect([growth.firstKey, growth.lastKey]).toEqual([keys.treeChunk(0), keys.treeChunk(0)]);
  });

  it('names the next chunk as the last key for records that run past a chunk', () => {
    const growth = growTree(keys, halfChunk, leaves('x', 'y'));
    expect(growth.firstPosition).toBe(TREE_CHUNK_RECORDS - 1);
    expect([growth.firstKey, growth.lastKey]).toEqual([keys.treeChunk(0), keys.treeChunk(1)]);
  });
});
