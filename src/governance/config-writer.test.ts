import { describe, expect, it } from 'vitest';
import { CHANGED_BY_ANNOTATION, DELETED_AT_ANNOTATION, DELETED_BY_ANNOTATION } from './config-writer.js';

describe('config writer annotations', () => {
  // Objects in a cluster already carry them, kubectl shows them and the README names them:
  // a rename would lose who changed or deleted an object across an upgrade.
  it('keep the names the README documents', () => {
    expect([CHANGED_BY_ANNOTATION, DELETED_BY_ANNOTATION, DELETED_AT_ANNOTATION]).toEqual([
      'governance.arbiter.dev/changed-by',
      'governance.arbiter.dev/deleted-by',
      'governance.arbiter.dev/deleted-at',
    ]);
  });
});
