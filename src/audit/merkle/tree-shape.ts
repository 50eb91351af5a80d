/**
 * Arithmetic on tree sizes and indices. Sizes go beyond 2^32, so nothing here uses
 * JavaScript's bit operators (which work on 32 bits): every step is safe-integer math.
 */

/** A perfect subtree: the 2^level leaves starting at index * 2^level. */
export interface NodeId {
  readonly level: number;
  readonly index: number;
}

export function nodeKey(node: NodeId): string {
  return `${node.level}:${node.index}`;
}

export function isPowerOfTwo(n: number): boolean {
  let power = 1;
  while (power < n) power *= 2;
  // Stryker disable next-line ConditionalExpression: power starts at 1, so it never equals an n below 1
  return n > 0 && power === n;
}

/** The largest power of two strictly below n (n >= 2), the split point k of RFC 6962. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** Whether the lowest bit of a non-negative safe integer is set. */
export function isOdd(n: number): boolean {
  return n % 2 === 1;
}

export function halve(n: number): number {
  return Math.floor(n / 2);
}

/**
 * The perfect subtrees that make up leaves [start, end), left to right and largest
 * first, when start is a multiple of the largest power of two not above end - start
 * (true of every range RFC 6962's recursion asks for). Their hashes, folded from the
 * right with nodeHash, give MTH(D[start:end]).
 */
export function perfectSubtrees(start: number, end: number): NodeId[] {
  const nodes: NodeId[] = [];
  let from = start;
  while (from < end) {
    let size = 1;
    while (size * 2 <= end - from) size *= 2;
    const level = Math.log2(size);
    nodes.push({ level, index: from / size });
    from += size;
  }
  return nodes;
}

/** The perfect subtrees completed by appending leaf `leafIndex`, lowest first. */
export function nodesCompletedBy(leafIndex: number): NodeId[] {
  const nodes: NodeId[] = [{ level: 0, index: leafIndex }];
  let level = 1;
  let width = 2;
  while ((leafIndex + 1) % width === 0) {
    nodes.push({ level, index: (leafIndex + 1) / width - 1 });
    level += 1;
    width *= 2;
  }
  return nodes;
}
